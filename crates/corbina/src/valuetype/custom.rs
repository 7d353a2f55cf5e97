//! Custom valuetypes (`custom valuetype V { … }`): the application marshals the state itself
//! through a [`DataOutputStream`] and reads it back through a [`DataInputStream`]
//! (`CustomMarshal`); a value whose id has no registered unmarshaller is kept as opaque chunks
//! and re-sent as received (`docs/mapping.md`, "Custom valuetypes").

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use corbina_cdr::value::{StateChunk, ValueInput, ValueOutput};
use corbina_cdr::{ByteOrder, CdrDecode, CdrEncode, CdrReader, CdrWriter, MarshalError, Result};

use super::ValueMember;

/// The application's state of a custom value: writes itself through a [`DataOutputStream`].
pub trait CustomMarshal: Any + Send + Sync + std::fmt::Debug {
    /// Writes the state (CORBA `CustomMarshal::marshal`).
    fn marshal<'a>(&'a self, out: &mut DataOutputStream<'_, 'a>) -> Result<()>;
}

/// Reads a custom value's state written by its [`CustomMarshal::marshal`] (CORBA
/// `CustomMarshal::unmarshal`), registered per repository id with
/// [`register_custom_unmarshal`].
pub type Unmarshal = fn(&mut DataInputStream<'_, '_>) -> Result<Arc<dyn CustomMarshal>>;

/// Writes a custom value's state into the stream it is sent on: each item goes into the
/// value's chunks, nested values share the stream's indirections.
pub struct DataOutputStream<'s, 'a> {
    w: &'s mut CdrWriter<'a>,
    out: &'s mut ValueOutput,
}

impl<'a> DataOutputStream<'_, 'a> {
    /// Writes `v` in its CDR form (a primitive, string, struct, sequence…).
    pub fn write<T: CdrEncode + ?Sized>(&mut self, v: &'a T) -> Result<()> {
        self.out.begin_member(self.w)?;
        v.encode(self.w)
    }

    /// Writes a value (a `ValueRef`, box, `ValueBase`, abstract value), or null.
    pub fn write_value<T: ValueMember>(&mut self, v: &'a T) -> Result<()> {
        v.write_member(self.w, self.out)
    }

    /// The writer, for items [`DataOutputStream::write`] does not cover (call
    /// [`DataOutputStream::begin_item`] first).
    pub fn writer(&mut self) -> &mut CdrWriter<'a> {
        self.w
    }

    /// Opens a chunk for what follows unless one is open.
    pub fn begin_item(&mut self) -> Result<()> {
        self.out.begin_member(self.w)
    }
}

/// Reads a custom value's state from the stream it arrives on.
pub struct DataInputStream<'s, 'b> {
    r: &'s mut CdrReader<'b>,
    input: &'s mut ValueInput,
}

impl<'b> DataInputStream<'_, 'b> {
    /// Reads an item written by [`DataOutputStream::write`].
    pub fn read<T: CdrDecode<'b>>(&mut self) -> Result<T> {
        self.input.begin_member(self.r)?;
        T::decode(self.r)
    }

    /// Reads a value written by [`DataOutputStream::write_value`].
    pub fn read_value<T: ValueMember>(&mut self) -> Result<T> {
        T::read_member(self.r, self.input)
    }

    /// The reader, after [`DataInputStream::begin_item`].
    pub fn reader(&mut self) -> &mut CdrReader<'b> {
        self.r
    }

    /// Steps into the next chunk when the current one is used up.
    pub fn begin_item(&mut self) -> Result<()> {
        self.input.begin_member(self.r)
    }
}

/// A custom value's state: the application's (typed), or the chunks received for an id
/// with no registered unmarshaller (opaque), or none.
#[derive(Debug, Clone, Default)]
pub enum CustomState {
    /// No state: nothing is written between the value's header and its end tag.
    #[default]
    Empty,
    /// The application's state, marshalled by it.
    Typed(Arc<dyn CustomMarshal>),
    /// State received and not unmarshalled: re-sent byte for byte when it lands at the same
    /// byte order and 8-octet alignment, `MARSHAL` otherwise.
    Opaque {
        /// The byte order it was received in.
        order: ByteOrder,
        /// Its chunks, in order.
        chunks: Vec<Arc<[u8]>>,
        /// Each chunk's alignment, in order.
        aligns: Vec<usize>,
    },
}

impl CustomState {
    /// The application's state.
    pub fn typed(state: impl CustomMarshal) -> Self {
        CustomState::Typed(Arc::new(state))
    }

    /// The application's state as a `T`, if it is one.
    pub fn downcast<T: CustomMarshal>(&self) -> Option<Arc<T>> {
        match self {
            CustomState::Typed(t) => {
                let any: Arc<dyn Any + Send + Sync> = t.clone();
                any.downcast::<T>().ok()
            }
            _ => None,
        }
    }

    /// The octets received for an opaque state (chunks concatenated).
    pub fn opaque_bytes(&self) -> Option<Vec<u8>> {
        match self {
            CustomState::Opaque { chunks, .. } => Some(chunks.concat()),
            _ => None,
        }
    }

    /// Writes the state of the custom value being written (its header is written).
    pub fn write<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()> {
        match self {
            CustomState::Empty => Ok(()),
            CustomState::Typed(t) => t.marshal(&mut DataOutputStream { w, out }),
            CustomState::Opaque {
                order,
                chunks,
                aligns,
            } => {
                if w.byte_order() != *order {
                    return Err(MarshalError::InvalidValue {
                        offset: w.position(),
                        reason: "opaque custom value state cannot be re-sent in another byte order: register an unmarshaller for its id",
                    });
                }
                for (c, &align) in chunks.iter().zip(aligns) {
                    out.begin_member(w)?;
                    if w.position() % 8 != align {
                        return Err(MarshalError::InvalidValue {
                            offset: w.position(),
                            reason: "opaque custom value state cannot be re-sent at another 8-octet alignment: register an unmarshaller for its id",
                        });
                    }
                    w.write_bytes(c);
                }
                Ok(())
            }
        }
    }

    /// Reads the state of the custom value of repository id `id` whose header was read: by
    /// the unmarshaller registered for `id`, or kept opaque.
    pub fn read(r: &mut CdrReader<'_>, input: &mut ValueInput, id: &str) -> Result<Self> {
        if let Some(f) = lookup_custom_unmarshal(id) {
            return f(&mut DataInputStream { r, input }).map(CustomState::Typed);
        }
        let order = r.byte_order();
        let (mut chunks, mut aligns) = (Vec::new(), Vec::new());
        loop {
            match input.next_chunk(r)? {
                StateChunk::Chunk { position, bytes } => {
                    aligns.push(position % 8);
                    chunks.push(Arc::from(bytes));
                }
                // The end tag: `ValueInput::end_value` reads it.
                StateChunk::End => break,
                StateChunk::Value => {
                    return Err(MarshalError::InvalidValue {
                        offset: r.position(),
                        reason: "custom value state holding values cannot be kept opaque: register an unmarshaller for its id",
                    })
                }
            }
        }
        if chunks.is_empty() {
            return Ok(CustomState::Empty);
        }
        Ok(CustomState::Opaque {
            order,
            chunks,
            aligns,
        })
    }
}

impl PartialEq for CustomState {
    /// Typed states are equal when they are the same object.
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (CustomState::Empty, CustomState::Empty) => true,
            (CustomState::Typed(a), CustomState::Typed(b)) => Arc::ptr_eq(a, b),
            (
                CustomState::Opaque {
                    order: o1,
                    chunks: c1,
                    aligns: a1,
                },
                CustomState::Opaque {
                    order: o2,
                    chunks: c2,
                    aligns: a2,
                },
            ) => o1 == o2 && c1 == c2 && a1 == a2,
            _ => false,
        }
    }
}

fn unmarshallers() -> &'static RwLock<HashMap<String, Unmarshal>> {
    static MAP: OnceLock<RwLock<HashMap<String, Unmarshal>>> = OnceLock::new();
    MAP.get_or_init(Default::default)
}

/// Registers how the state of custom values of repository id `id` is read (process-wide, as
/// the value factory registry), returning the unmarshaller it replaces.
pub fn register_custom_unmarshal(id: &str, f: Unmarshal) -> Option<Unmarshal> {
    unmarshallers()
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(id.to_owned(), f)
}

/// Removes the unmarshaller registered for `id`.
pub fn unregister_custom_unmarshal(id: &str) -> Option<Unmarshal> {
    unmarshallers()
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(id)
}

fn lookup_custom_unmarshal(id: &str) -> Option<Unmarshal> {
    unmarshallers()
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(id)
        .copied()
}
