//! Objects by value on the wire (CORBA 3.0 §15.3.4): value tags, null values, indirections,
//! repository ids and codebase URLs, chunked encoding with end tags, and truncation.
//!
//! The codec is split in two halves that keep per-stream state next to a [`CdrWriter`] or
//! [`CdrReader`]: [`ValueOutput`] writes headers and chunks and remembers what it wrote (so a
//! value reachable twice is sent once, then by indirection), [`ValueInput`] reads them back and
//! remembers where each value began (so an indirection finds its value, and a cycle does not
//! loop). Neither knows any value type: generated code writes and reads the state members
//! between [`ValueOutput::begin_value`]/[`ValueOutput::end_value`] and
//! [`ValueInput::read_value`]/[`ValueInput::end_value`], calling `begin_member` before each
//! member that is not itself a value.
//!
//! Chunking: the writer puts whole state members in a chunk; a nested value ends the current
//! chunk and a new one starts after it, as omniORB and JacORB write them. A peer may also end a
//! chunk inside a member, between two primitives (CORBA 3.0 §15.3.4.6 forbids splitting only a
//! primitive, a string or an indirection; Java ORBs split large arrays): the reader follows the
//! open chunk ([`CdrReader::set_chunk_end`]) and steps over the next chunk's length when a read
//! reaches the end, so state members read the same however the peer chunked them. Null values and indirections are
//! written inside chunks (they may not be split) and accepted inside or outside them. A reader
//! that does not know the most derived type reads the state of a base it knows and
//! [`ValueInput::end_value`] skips the rest chunk by chunk, nested values included.
//!
//! Hostile input: every chunk length, repository-id count and indirection offset is checked
//! before it is used (indirections must point backwards, inside the stream, at a value or string
//! read before); nesting is bounded by a limit of its own ([`DEFAULT_MAX_VALUE_NESTING`],
//! configurable), the same when encoding; nothing is allocated by a length field's size.
//! Nothing here recurses per nested value: skipping unknown state tracks the values it steps
//! over in a list, not on the call stack.
//!
//! ```
//! use corbina_cdr::value::{RepositoryIds, ValueInput, ValueOutput, ValueStart, WriteHeader};
//! use corbina_cdr::{ByteOrder, CdrContext, CdrReader, CdrWriter};
//!
//! // A value `IDL:Point:1.0 { long x; }` written twice: the second is an indirection.
//! let point = std::sync::Arc::new(7i32);
//! let id = std::sync::Arc::as_ptr(&point) as usize;
//! let header = WriteHeader::single("IDL:Point:1.0");
//! let mut w = CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::GIOP_1_2);
//! let mut out = ValueOutput::new();
//! for _ in 0..2 {
//!     if out.begin_value(&mut w, id, &header)? {
//!         out.begin_member(&mut w)?;
//!         w.write_long(*point);
//!         out.end_value(&mut w)?;
//!     }
//! }
//! let bytes = w.into_bytes();
//!
//! let mut r = CdrReader::new(&bytes, ByteOrder::Big, CdrContext::GIOP_1_2);
//! let mut input = ValueInput::new();
//! let ValueStart::Value(h) = input.read_value(&mut r)? else { panic!() };
//! assert_eq!(h.repository_ids.most_derived(), Some("IDL:Point:1.0"));
//! input.begin_member(&mut r)?;
//! let x = std::sync::Arc::new(r.read_long()?);
//! input.register(h.position, x.clone());
//! input.end_value(&mut r)?;
//! let ValueStart::Indirection { target } = input.read_value(&mut r)? else { panic!() };
//! let again = input.resolve(target, r.position())?.downcast::<i32>().unwrap();
//! assert!(std::sync::Arc::ptr_eq(&x, &again));
//! # Ok::<(), corbina_cdr::MarshalError>(())
//! ```

use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use crate::error::{MarshalError, Result};
use crate::reader::CdrReader;
use crate::writer::CdrWriter;
use crate::ByteOrder;

/// The lowest value tag; tags run to `0x7fff_ffff`, the low byte holding the flags below.
pub const VALUE_TAG_MIN: u32 = 0x7fff_ff00;
/// Tag of a null value.
pub const NULL_TAG: u32 = 0;
/// Tag of an indirection (a value, repository id or codebase sent before).
pub const INDIRECTION_TAG: u32 = 0xffff_ffff;
/// Value tag flag: a codebase URL follows the tag.
pub const CODEBASE_FLAG: u32 = 0x01;
/// Value tag repository-id bits: no id.
pub const REPOSITORY_ID_NONE: u32 = 0x00;
/// Value tag repository-id bits: one id.
pub const REPOSITORY_ID_SINGLE: u32 = 0x02;
/// Value tag repository-id bits: a list of ids, most derived first (truncatable values).
pub const REPOSITORY_ID_LIST: u32 = 0x06;
const REPOSITORY_ID_MASK: u32 = 0x06;
/// Value tag flag: the state is chunked and ends with an end tag.
pub const CHUNKED_FLAG: u32 = 0x08;
/// The default for how deeply values may nest in one another's state, when encoding and
/// decoding (a linked list sent as nested values is this many nodes long at most); a deeper
/// graph is refused with MARSHAL ([`MarshalError::NestingTooDeep`]), before anything is sent
/// when encoding. The ORB setting `-ORBmaxValueNesting` changes it for the process
/// ([`set_max_value_nesting`]); a [`ValueInput`]/[`ValueOutput`] takes the limit in force
/// when it is made, or one of its own ([`ValueInput::with_max_nesting`]).
///
/// The bound is one of memory, not of the thread's stack: this codec keeps one octet per open
/// value, and the generated state codecs that recurse once per level run each nested value
/// on a stack grown on the heap when the thread's runs low (`corbina::valuetype`), so any
/// depth up to the limit decodes in any thread. What a peer can make a receiver hold per
/// level while a list decodes is that stack, the value's entry in the indirection table and
/// the value itself: measured 562 octets a level in a release build (2,317 in a debug one;
/// `measure_bytes_held_per_nesting_level` in `corbina`), so about 56 MB at this default, for
/// a message of a few hundred KB (a level takes at least a 4-octet tag on the wire, 16 for
/// the measured list node). Sharing and cycles do not nest: an indirection is one
/// level. Structs, unions and encapsulations nested inside values count against the reader's
/// own depth limit ([`CdrReader::enter`]), not this one.
pub const DEFAULT_MAX_VALUE_NESTING: u32 = 100_000;
/// The default nesting limit (see [`DEFAULT_MAX_VALUE_NESTING`]).
pub const MAX_VALUE_NESTING: u32 = DEFAULT_MAX_VALUE_NESTING;

static MAX_NESTING: AtomicU32 = AtomicU32::new(DEFAULT_MAX_VALUE_NESTING);

/// The value nesting limit new [`ValueInput`]s and [`ValueOutput`]s take.
pub fn max_value_nesting() -> u32 {
    MAX_NESTING.load(Ordering::Relaxed)
}

/// Sets the value nesting limit for the process (at least 1), returning the one it replaces.
/// Process-wide because decoding has no ORB at hand (like the value factory registry): the
/// ORB sets it from `-ORBmaxValueNesting`.
pub fn set_max_value_nesting(limit: u32) -> u32 {
    MAX_NESTING.swap(limit.max(1), Ordering::Relaxed)
}

/// The most repository ids a value tag's list may carry (a truncatable chain this long is
/// already far beyond real IDL).
pub const MAX_REPOSITORY_IDS: usize = 64;

/// A value (or indirection target) as the application holds it: shared, of any type.
pub type SharedValue = Arc<dyn Any + Send + Sync>;

/// The repository ids a value tag carries.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum RepositoryIds {
    /// None: the receiver knows the type from the formal parameter.
    #[default]
    None,
    /// The most derived type only.
    Single(Arc<str>),
    /// Most derived first, then the truncatable bases a receiver may truncate to.
    List(Arc<[Arc<str>]>),
}

impl RepositoryIds {
    /// The most derived type's id, if any was sent.
    pub fn most_derived(&self) -> Option<&str> {
        match self {
            RepositoryIds::None => None,
            RepositoryIds::Single(id) => Some(id),
            RepositoryIds::List(ids) => ids.first().map(|id| &**id),
        }
    }

    /// Every id sent, most derived first.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        let ids: &[Arc<str>] = match self {
            RepositoryIds::None => &[],
            RepositoryIds::Single(id) => std::slice::from_ref(id),
            RepositoryIds::List(ids) => ids,
        };
        ids.iter().map(|id| &**id)
    }
}

/// A value's header as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueHeader {
    /// Where the value tag is in the reader's buffer: the key indirections use.
    pub position: usize,
    /// The codebase URL, if sent.
    pub codebase: Option<Arc<str>>,
    /// The repository ids sent.
    pub repository_ids: RepositoryIds,
    /// Whether the state is chunked (then unknown derived state can be skipped).
    pub chunked: bool,
}

/// What a value position holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueStart {
    /// A null value.
    Null,
    /// A value sent before, whose tag is at `target` (see [`ValueInput::resolve`]).
    Indirection {
        /// Position of the earlier value's tag.
        target: usize,
    },
    /// A new value: its state follows, then [`ValueInput::end_value`] must be called.
    Value(ValueHeader),
}

/// Repository ids to write in a value tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteIds<'h> {
    /// No id (the receiver's formal type is exact).
    None,
    /// The most derived id.
    Single(&'h str),
    /// Most derived first, then the truncatable bases.
    List(&'h [&'h str]),
}

/// A value header to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteHeader<'h> {
    /// Repository ids.
    pub repository_ids: WriteIds<'h>,
    /// Codebase URL, if any.
    pub codebase: Option<&'h str>,
    /// Whether to chunk the state (required for truncatable and custom values; values nested in
    /// a chunked value are chunked whatever this says).
    pub chunked: bool,
}

impl<'h> WriteHeader<'h> {
    /// One repository id, unchunked: a plain concrete value.
    pub const fn single(id: &'h str) -> Self {
        WriteHeader {
            repository_ids: WriteIds::Single(id),
            codebase: None,
            chunked: false,
        }
    }

    /// A truncatable value: its id and its bases', chunked.
    pub const fn truncatable(ids: &'h [&'h str]) -> Self {
        WriteHeader {
            repository_ids: WriteIds::List(ids),
            codebase: None,
            chunked: true,
        }
    }
}

fn invalid(offset: usize, reason: &'static str) -> MarshalError {
    MarshalError::InvalidValue { offset, reason }
}

/// Per-stream state for writing values: what was written where, and the open chunk.
#[derive(Debug)]
pub struct ValueOutput {
    /// Identity of each value written → position of its tag.
    written: HashMap<usize, usize>,
    /// Repository ids and codebases written → position of their length field.
    strings: HashMap<String, usize>,
    /// The open chunk: (owned index of its length field, stream position of its first octet).
    chunk: Option<(usize, usize)>,
    /// Chunked values open (the end tag's nesting level).
    chunk_level: i32,
    /// Whether each open value is chunked, innermost last.
    levels: Vec<bool>,
    /// The stream position after the end tag written last, so that an enclosing value
    /// ending right there shares it.
    last_end: Option<usize>,
    /// How many values may be open at once.
    max_nesting: u32,
}

impl Default for ValueOutput {
    fn default() -> Self {
        Self::with_max_nesting(max_value_nesting())
    }
}

impl ValueOutput {
    /// State for one stream (one message body or encapsulation: indirections do not cross),
    /// with the process's nesting limit ([`max_value_nesting`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// State for one stream refusing values nested deeper than `limit` (at least 1).
    pub fn with_max_nesting(limit: u32) -> Self {
        ValueOutput {
            written: HashMap::new(),
            strings: HashMap::new(),
            chunk: None,
            chunk_level: 0,
            levels: Vec::new(),
            last_end: None,
            max_nesting: limit.max(1),
        }
    }

    /// The nesting limit in force.
    pub fn max_nesting(&self) -> u32 {
        self.max_nesting
    }

    /// How many values are open (the depth of the value being written).
    pub fn depth(&self) -> usize {
        self.levels.len()
    }

    /// Writes a null value.
    pub fn write_null(&mut self, w: &mut CdrWriter<'_>) -> Result<()> {
        self.begin_member(w)?;
        w.write_ulong(NULL_TAG);
        Ok(())
    }

    /// Starts the value whose identity is `identity` (its address: `Arc::as_ptr`); the
    /// graph must stay alive while the stream is written. Returns `false` when it was written
    /// before, in which case an indirection was written and no state or `end_value` follows.
    pub fn begin_value(
        &mut self,
        w: &mut CdrWriter<'_>,
        identity: usize,
        header: &WriteHeader<'_>,
    ) -> Result<bool> {
        if let Some(&target) = self.written.get(&identity) {
            self.begin_member(w)?;
            write_indirection(w, target);
            return Ok(false);
        }
        if self.levels.len() >= self.max_nesting as usize {
            return Err(MarshalError::NestingTooDeep {
                offset: w.position(),
                limit: self.max_nesting,
            });
        }
        // A nested value's header starts outside any chunk.
        self.end_chunk(w)?;
        let chunked = header.chunked || self.chunk_level > 0;
        let mut tag = VALUE_TAG_MIN;
        if header.codebase.is_some() {
            tag |= CODEBASE_FLAG;
        }
        tag |= match header.repository_ids {
            WriteIds::None => REPOSITORY_ID_NONE,
            WriteIds::Single(_) => REPOSITORY_ID_SINGLE,
            WriteIds::List(_) => REPOSITORY_ID_LIST,
        };
        if chunked {
            tag |= CHUNKED_FLAG;
        }
        w.align(4);
        self.written.insert(identity, w.position());
        w.write_ulong(tag);
        if let Some(codebase) = header.codebase {
            self.write_indirectable_string(w, codebase)?;
        }
        match header.repository_ids {
            WriteIds::None => {}
            WriteIds::Single(id) => self.write_indirectable_string(w, id)?,
            WriteIds::List(ids) => {
                if ids.is_empty() || ids.len() > MAX_REPOSITORY_IDS {
                    return Err(MarshalError::LimitExceeded {
                        size: ids.len() as u64,
                        limit: MAX_REPOSITORY_IDS as u64,
                    });
                }
                w.write_length(ids.len())?;
                for id in ids {
                    self.write_indirectable_string(w, id)?;
                }
            }
        }
        self.levels.push(chunked);
        if chunked {
            self.chunk_level += 1;
        }
        Ok(true)
    }

    /// Call before writing each state member that is not a value (a value member starts with
    /// [`ValueOutput::begin_value`] or [`ValueOutput::write_null`]): opens a chunk when the
    /// value is chunked and none is open.
    pub fn begin_member(&mut self, w: &mut CdrWriter<'_>) -> Result<()> {
        if self.chunk_level > 0 && self.chunk.is_none() {
            w.align(4);
            w.write_ulong(0); // length, patched when the chunk ends
            self.chunk = Some((w.owned_bytes().len() - 4, w.position()));
        }
        Ok(())
    }

    /// Call after a state member that ends in an array of octets (a string, a wstring, a
    /// sequence or array of primitives): closes the open chunk there, so that the next
    /// member starts a chunk of its own. omniORB 4.3 misreads a chunk that goes on after an
    /// array crossing the end of its receive buffer (`cdrValueChunkStream::get_octet_array`,
    /// MARSHAL PassEndOfMessage); its own writer ends chunks after such arrays. No-op
    /// outside a chunk.
    pub fn end_member_chunk(&mut self, w: &mut CdrWriter<'_>) -> Result<()> {
        self.end_chunk(w)
    }

    /// Ends the value begun last: closes its chunk and writes its end tag if chunked.
    pub fn end_value(&mut self, w: &mut CdrWriter<'_>) -> Result<()> {
        let Some(chunked) = self.levels.pop() else {
            return Err(invalid(w.position(), "end_value without an open value"));
        };
        if chunked {
            self.end_chunk(w)?;
            // An enclosing value ending where a nested one did: one end tag, of the outer
            // level, ends both (CORBA 3.0 §15.3.4.5), as omniORB writes it. omniORB 4.2 and 4.3
            // abort (cdrValueChunkStream.cc:59, `pd_nestLevel == 0`) on the two tags -2 -1
            // that say the same. Only when this writer's stream ends in that tag (state may
            // be written through a writer of its own).
            let shared = self
                .last_end
                .take()
                .filter(|&after| after == w.position())
                .and_then(|_| ends_in_tag(w, -(self.chunk_level + 1)));
            match shared {
                Some(index) => w.patch_ulong(index, (-self.chunk_level) as u32),
                None => {
                    w.align(4);
                    w.write_long(-self.chunk_level);
                }
            }
            self.last_end = Some(w.position());
            self.chunk_level -= 1;
        }
        Ok(())
    }

    fn end_chunk(&mut self, w: &mut CdrWriter<'_>) -> Result<()> {
        if let Some((index, start)) = self.chunk.take() {
            let len = w.position() - start;
            if len == 0 {
                // A chunk with nothing in it is not legal: drop its length field.
                if w.truncate(w.len() - 4) {
                    return Ok(());
                }
            }
            if len as u64 >= u64::from(VALUE_TAG_MIN) {
                return Err(MarshalError::LimitExceeded {
                    size: len as u64,
                    limit: u64::from(VALUE_TAG_MIN) - 1,
                });
            }
            w.patch_ulong(index, len as u32);
        }
        Ok(())
    }

    fn write_indirectable_string(&mut self, w: &mut CdrWriter<'_>, s: &str) -> Result<()> {
        w.align(4);
        if let Some(&target) = self.strings.get(s) {
            write_indirection(w, target);
            return Ok(());
        }
        self.strings.insert(s.to_owned(), w.position());
        w.write_string(s)
    }
}

/// The owned-buffer index of the end tag `tag` when `w`'s stream ends in it (its last
/// segment is the owned buffer's end, and its last four octets are that tag).
fn ends_in_tag(w: &CdrWriter<'_>, tag: i32) -> Option<usize> {
    let owned = w.owned_bytes();
    let last = *w.segments().last()?;
    if owned.len() < 4 || last.as_ptr_range().end != owned.as_ptr_range().end {
        return None;
    }
    let index = owned.len() - 4;
    let raw: [u8; 4] = owned[index..].try_into().ok()?;
    let v = match w.byte_order() {
        ByteOrder::Big => u32::from_be_bytes(raw),
        ByteOrder::Little => u32::from_le_bytes(raw),
    };
    (v == tag as u32).then_some(index)
}

fn write_indirection(w: &mut CdrWriter<'_>, target: usize) {
    w.align(4);
    w.write_ulong(INDIRECTION_TAG);
    // Relative to the offset field itself; always negative (targets are behind us).
    let offset = target as i64 - w.position() as i64;
    w.write_long(offset as i32);
}

/// What stands where [`ValueInput::next_chunk`] expects the next chunk of a value's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateChunk<'b> {
    /// A whole chunk: its octets, which start at stream position `position`.
    Chunk {
        /// Where the octets start in the stream (their CDR alignment).
        position: usize,
        /// The chunk's octets.
        bytes: &'b [u8],
    },
    /// A nested value, a null value or an indirection (its tag left unread).
    Value,
    /// The value's end tag (left for [`ValueInput::end_value`]).
    End,
}

/// Per-stream state for reading values: where values and strings began, and the chunk and
/// nesting levels the reader is in.
#[derive(Debug)]
pub struct ValueInput {
    /// Tag position of every value read → the application's value, once registered.
    values: HashMap<usize, Option<SharedValue>>,
    /// Repository ids and codebases by the position of their length field.
    strings: HashMap<usize, Arc<str>>,
    /// Repository-id lists by the position of their count.
    lists: HashMap<usize, Arc<[Arc<str>]>>,
    /// Chunked values open; a chunked value holds only chunked values.
    chunk_level: i32,
    /// Whether each open value is chunked, innermost last (bounded by `max_nesting`).
    levels: Vec<bool>,
    /// An end tag already read closed the values down to this level.
    pending_end: Option<i32>,
    /// How many values may be open at once.
    max_nesting: u32,
}

impl Default for ValueInput {
    fn default() -> Self {
        Self::with_max_nesting(max_value_nesting())
    }
}

impl ValueInput {
    /// State for one stream, with the process's nesting limit ([`max_value_nesting`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// State for one stream refusing values nested deeper than `limit` (at least 1).
    pub fn with_max_nesting(limit: u32) -> Self {
        ValueInput {
            values: HashMap::new(),
            strings: HashMap::new(),
            lists: HashMap::new(),
            chunk_level: 0,
            levels: Vec::new(),
            pending_end: None,
            max_nesting: limit.max(1),
        }
    }

    /// The nesting limit in force.
    pub fn max_nesting(&self) -> u32 {
        self.max_nesting
    }

    /// How many values are open (the depth of the value being read).
    pub fn depth(&self) -> usize {
        self.levels.len()
    }

    /// Reads what stands where a value is expected: null, an indirection, or a new value's
    /// header (then its state follows).
    pub fn read_value(&mut self, r: &mut CdrReader<'_>) -> Result<ValueStart> {
        if self.pending_end.is_some() {
            return Err(invalid(
                r.position(),
                "value member after the value's end tag",
            ));
        }
        // The chunk end is the reader's; tags are read with it taken, so that reaching it does
        // not step into a next chunk.
        let chunk_end = r.take_chunk_end();
        let mut in_chunk = false;
        if let Some(end) = chunk_end {
            let pos = r.position();
            if pos > end {
                return Err(invalid(pos, "state member crosses a chunk boundary"));
            }
            // Where the tag starts decides, not where the reader is: a sender may count the
            // padding before the tag in the chunk (omniORB does, after a string), so the tag
            // of a nested value starts exactly at the chunk's end.
            in_chunk = r.aligned_position(4).is_some_and(|tag| tag < end);
        }
        let mut chunk_end = chunk_end;
        if !in_chunk && self.chunk_level > 0 {
            // A chunk that starts with a null or an indirection: ValueOutput writes those
            // inside a chunk (a member of a chunked value), so a chunk may begin with one.
            let mut peek = r.clone();
            peek.align(4)?;
            let len = peek.read_ulong()?;
            if len > 0 && len < VALUE_TAG_MIN && len as usize <= peek.remaining() {
                if let Ok(NULL_TAG | INDIRECTION_TAG) = peek.clone().read_ulong() {
                    chunk_end = Some(peek.position() + len as usize);
                    in_chunk = true;
                    *r = peek;
                }
            }
        }
        r.align(4)?;
        let tag_pos = r.position();
        let tag = r.read_ulong()?;
        let start = match tag {
            NULL_TAG => ValueStart::Null,
            INDIRECTION_TAG => {
                let target = read_indirection(r, tag_pos)?;
                if !self.values.contains_key(&target) {
                    return Err(MarshalError::InvalidIndirection {
                        offset: tag_pos,
                        indirection: (target as i64 - tag_pos as i64 - 4) as i32,
                    });
                }
                ValueStart::Indirection { target }
            }
            VALUE_TAG_MIN..=0x7fff_ffff if !in_chunk => {
                return self.read_header(r, tag_pos, tag).map(ValueStart::Value)
            }
            VALUE_TAG_MIN..=0x7fff_ffff => {
                return Err(invalid(tag_pos, "nested value header inside a chunk"))
            }
            _ => return Err(invalid(tag_pos, "not a value tag")),
        };
        if let Some(end) = chunk_end.filter(|_| in_chunk) {
            if r.position() > end {
                return Err(invalid(tag_pos, "indirection crosses a chunk boundary"));
            }
            r.set_chunk_end(Some(end));
        }
        Ok(start)
    }

    fn read_header(
        &mut self,
        r: &mut CdrReader<'_>,
        position: usize,
        tag: u32,
    ) -> Result<ValueHeader> {
        let chunked = tag & CHUNKED_FLAG != 0;
        if self.chunk_level > 0 && !chunked {
            return Err(invalid(
                position,
                "unchunked value nested in a chunked value",
            ));
        }
        let codebase = if tag & CODEBASE_FLAG != 0 {
            Some(self.read_indirectable_string(r)?)
        } else {
            None
        };
        let repository_ids = match tag & REPOSITORY_ID_MASK {
            REPOSITORY_ID_NONE => RepositoryIds::None,
            REPOSITORY_ID_SINGLE => RepositoryIds::Single(self.read_indirectable_string(r)?),
            REPOSITORY_ID_LIST => RepositoryIds::List(self.read_repository_id_list(r)?),
            _ => {
                return Err(invalid(
                    position,
                    "reserved repository-id bits in value tag",
                ))
            }
        };
        if tag & 0xf0 != 0 {
            return Err(invalid(position, "reserved bits set in value tag"));
        }
        // Bounds the values open at once (and so what their decoders hold), skipped ones
        // included.
        if self.levels.len() >= self.max_nesting as usize {
            return Err(MarshalError::NestingTooDeep {
                offset: position,
                limit: self.max_nesting,
            });
        }
        self.values.insert(position, None);
        self.levels.push(chunked);
        if chunked {
            self.chunk_level += 1;
        }
        Ok(ValueHeader {
            position,
            codebase,
            repository_ids,
            chunked,
        })
    }

    /// The repository ids of the value header at `r`, looked at ahead: neither `r` nor this
    /// state moves. Indirected ids resolve through what this stream has read (a writer sends
    /// a repeated id as an indirection). `None` where no well-formed value header stands.
    pub fn peek_repository_ids(&self, r: &CdrReader<'_>) -> Option<Vec<Arc<str>>> {
        let mut r = r.clone();
        r.take_chunk_end();
        r.align(4).ok()?;
        let tag = r.read_ulong().ok()?;
        if !(VALUE_TAG_MIN..=0x7fff_ffff).contains(&tag) {
            return None;
        }
        if tag & CODEBASE_FLAG != 0 {
            self.peek_string(&mut r)?;
        }
        match tag & REPOSITORY_ID_MASK {
            REPOSITORY_ID_NONE => Some(Vec::new()),
            REPOSITORY_ID_SINGLE => Some(vec![self.peek_string(&mut r)?]),
            REPOSITORY_ID_LIST => {
                r.align(4).ok()?;
                let pos = r.position();
                let count = r.read_ulong().ok()?;
                if count == INDIRECTION_TAG {
                    let target = read_indirection(&mut r, pos).ok()?;
                    return self.lists.get(&target).map(|l| l.to_vec());
                }
                let count = count as usize;
                if count == 0 || count > MAX_REPOSITORY_IDS || r.check_length(count, 8).is_err() {
                    return None;
                }
                (0..count).map(|_| self.peek_string(&mut r)).collect()
            }
            _ => None,
        }
    }

    /// [`ValueInput::read_indirectable_string`] without recording anything.
    fn peek_string(&self, r: &mut CdrReader<'_>) -> Option<Arc<str>> {
        r.align(4).ok()?;
        let pos = r.position();
        if r.clone().read_ulong().ok()? == INDIRECTION_TAG {
            r.read_ulong().ok()?;
            let target = read_indirection(r, pos).ok()?;
            return self.strings.get(&target).cloned();
        }
        Some(r.read_string().ok()?.into())
    }

    fn read_indirectable_string(&mut self, r: &mut CdrReader<'_>) -> Result<Arc<str>> {
        r.align(4)?;
        let pos = r.position();
        let mut peek = r.clone();
        if peek.read_ulong()? == INDIRECTION_TAG {
            r.read_ulong()?;
            let target = read_indirection(r, pos)?;
            return self
                .strings
                .get(&target)
                .cloned()
                .ok_or(MarshalError::InvalidIndirection {
                    offset: pos,
                    indirection: (target as i64 - pos as i64 - 4) as i32,
                });
        }
        let s: Arc<str> = r.read_string()?.into();
        self.strings.insert(pos, s.clone());
        Ok(s)
    }

    fn read_repository_id_list(&mut self, r: &mut CdrReader<'_>) -> Result<Arc<[Arc<str>]>> {
        r.align(4)?;
        let pos = r.position();
        let count = r.read_ulong()?;
        if count == INDIRECTION_TAG {
            let target = read_indirection(r, pos)?;
            return self
                .lists
                .get(&target)
                .cloned()
                .ok_or(MarshalError::InvalidIndirection {
                    offset: pos,
                    indirection: (target as i64 - pos as i64 - 4) as i32,
                });
        }
        let count = count as usize;
        if count == 0 {
            return Err(invalid(pos, "empty repository-id list"));
        }
        if count > MAX_REPOSITORY_IDS {
            return Err(MarshalError::LimitExceeded {
                size: count as u64,
                limit: MAX_REPOSITORY_IDS as u64,
            });
        }
        // Each id takes at least 8 octets (a length and an indirection offset, or a string).
        r.check_length(count, 8)?;
        let mut ids = Vec::with_capacity(count);
        for _ in 0..count {
            ids.push(self.read_indirectable_string(r)?);
        }
        let ids: Arc<[Arc<str>]> = ids.into();
        self.lists.insert(pos, ids.clone());
        Ok(ids)
    }

    /// Call before reading each state member that is not a value: in a chunked value, steps
    /// into the next chunk when the current one is used up.
    pub fn begin_member(&mut self, r: &mut CdrReader<'_>) -> Result<()> {
        if self.chunk_level == 0 {
            return Ok(());
        }
        if self.pending_end.is_some() {
            return Err(invalid(
                r.position(),
                "state member after the value's end tag",
            ));
        }
        let pos = r.position();
        if let Some(end) = r.chunk_end() {
            // Inside a chunk the member goes on in it. At its end the next chunk is stepped
            // into here (the reader would do it at the member's first read; doing it here
            // keeps a member's position, e.g. for custom state, at its first byte).
            if pos < end {
                return Ok(());
            }
            if pos > end {
                return Err(invalid(pos, "state member crosses a chunk boundary"));
            }
            r.set_chunk_end(None);
        }
        let mut peek = r.clone();
        peek.align(4)?;
        let at = peek.position();
        match peek.read_long()? {
            n if n > 0 && (n as u32) < VALUE_TAG_MIN => {
                let n = n as usize;
                if n > peek.remaining() {
                    return Err(MarshalError::LengthExceedsData {
                        offset: at,
                        length: n as u64,
                        remaining: peek.remaining(),
                    });
                }
                *r = peek;
                r.set_chunk_end(Some(r.position() + n));
                Ok(())
            }
            _ => Err(invalid(at, "expected a chunk of value state")),
        }
    }

    /// Takes the next chunk of a chunked value's state whole (for state kept as octets: a
    /// custom value without its unmarshaller), from a chunk boundary: a chunk, or the nested
    /// value or end tag that stands there instead (left unread). Reading from inside a
    /// chunk is an error: whole chunks only.
    pub fn next_chunk<'b>(&mut self, r: &mut CdrReader<'b>) -> Result<StateChunk<'b>> {
        if self.chunk_level == 0 || self.pending_end.is_some() {
            return Err(invalid(r.position(), "no chunked value state to take"));
        }
        // The reader must not step into the next chunk by itself: its length is read here.
        if let Some(end) = r.take_chunk_end() {
            if r.position() != end {
                return Err(invalid(
                    r.position(),
                    "whole chunk taken from inside a chunk",
                ));
            }
        }
        let mut peek = r.clone();
        peek.align(4)?;
        let at = peek.position();
        let tag = peek.read_long()?;
        if tag < 0 {
            return Ok(StateChunk::End);
        }
        if tag == 0 || tag as u32 >= VALUE_TAG_MIN {
            return Ok(StateChunk::Value);
        }
        let n = tag as usize;
        if n > peek.remaining() {
            return Err(MarshalError::LengthExceedsData {
                offset: at,
                length: n as u64,
                remaining: peek.remaining(),
            });
        }
        *r = peek;
        let position = r.position();
        let bytes = r.read_bytes(n)?;
        Ok(StateChunk::Chunk { position, bytes })
    }

    /// Ends the value read last. In a chunked value, whatever state was not read (the state of
    /// a derived type the receiver does not know: truncation) is skipped, nested values
    /// included, up to the value's end tag.
    pub fn end_value(&mut self, r: &mut CdrReader<'_>) -> Result<()> {
        let Some(chunked) = self.levels.pop() else {
            return Err(invalid(r.position(), "end_value without an open value"));
        };
        if !chunked {
            return Ok(());
        }
        let level = self.chunk_level;
        let skipped = self.skip_rest(r, level);
        self.chunk_level -= 1;
        skipped
    }

    /// Skips what is left of the chunked value at `level`, through its end tag. Iterative:
    /// nested values being skipped are tracked in `levels`, not on the call stack.
    fn skip_rest(&mut self, r: &mut CdrReader<'_>, level: i32) -> Result<()> {
        loop {
            if let Some(closed_to) = self.pending_end {
                // An end tag read for a nested value also ended the innermost one.
                if closed_to >= self.chunk_level {
                    self.pending_end = None;
                }
                if self.chunk_level == level {
                    return Ok(());
                }
                self.close_skipped();
                continue;
            }
            if let Some(end) = r.take_chunk_end() {
                let pos = r.position();
                if pos > end {
                    return Err(invalid(pos, "state member crosses a chunk boundary"));
                }
                r.read_bytes(end - pos)?;
            }
            let mut peek = r.clone();
            peek.align(4)?;
            let at = peek.position();
            let tag = peek.read_long()?;
            if tag < 0 {
                *r = peek;
                let closes = tag.unsigned_abs();
                if closes > self.chunk_level as u32 {
                    return Err(invalid(
                        at,
                        "end tag of a value nested deeper than any open",
                    ));
                }
                let closes = closes as i32;
                if closes < self.chunk_level {
                    self.pending_end = Some(closes);
                }
                if self.chunk_level == level {
                    return Ok(());
                }
                self.close_skipped();
            } else if tag == 0 || tag as u32 >= VALUE_TAG_MIN {
                // A nested value (or null) in the skipped state: its header is read so its
                // position stays known and a later indirection to it is reported, not misread.
                self.read_value(r)?;
            } else {
                let n = tag as usize;
                if n > peek.remaining() {
                    return Err(MarshalError::LengthExceedsData {
                        offset: at,
                        length: n as u64,
                        remaining: peek.remaining(),
                    });
                }
                *r = peek;
                r.set_chunk_end(Some(r.position() + n));
            }
        }
    }

    /// Closes a nested value met while skipping.
    fn close_skipped(&mut self) {
        self.levels.pop();
        self.chunk_level -= 1;
    }

    /// Skips a whole value (for a member of a type the receiver cannot build). Only chunked
    /// values can be skipped; null and indirections are consumed.
    pub fn skip_value(&mut self, r: &mut CdrReader<'_>) -> Result<ValueStart> {
        let start = self.read_value(r)?;
        if let ValueStart::Value(h) = &start {
            if !h.chunked {
                return Err(invalid(h.position, "cannot skip an unchunked value"));
            }
            self.end_value(r)?;
        }
        Ok(start)
    }

    /// Records the application's value for the value whose tag is at `position`, so that
    /// indirections to it resolve. Register before reading the state when the graph may be
    /// cyclic.
    pub fn register(&mut self, position: usize, value: SharedValue) {
        if let Some(slot) = self.values.get_mut(&position) {
            *slot = Some(value);
        }
    }

    /// The value an indirection points to (`at`: where the indirection was, for errors).
    pub fn resolve(&self, target: usize, at: usize) -> Result<SharedValue> {
        match self.values.get(&target) {
            Some(Some(v)) => Ok(v.clone()),
            Some(None) => Err(invalid(
                at,
                "indirection to a value that was skipped or not built",
            )),
            None => Err(MarshalError::InvalidIndirection {
                offset: at,
                indirection: (target as i64 - at as i64) as i32,
            }),
        }
    }

    /// Whether the reader is inside a value's state.
    pub fn in_value(&self) -> bool {
        !self.levels.is_empty()
    }
}

/// Reads an indirection's offset (the tag at `tag_pos` already read) and checks that it points
/// backwards, inside the buffer, before the tag.
fn read_indirection(r: &mut CdrReader<'_>, tag_pos: usize) -> Result<usize> {
    let offset_pos = r.position();
    let offset = r.read_long()?;
    let target = offset_pos as i64 + i64::from(offset);
    if offset >= -4 || target < 0 || target >= tag_pos as i64 {
        return Err(MarshalError::InvalidIndirection {
            offset: tag_pos,
            indirection: offset,
        });
    }
    Ok(target as usize)
}

#[cfg(test)]
#[path = "value_tests.rs"]
mod tests;
