//! Service contexts (`IOP::ServiceContext`): out-of-band data carried by Requests and
//! Replies. The list keeps every context verbatim; the ones GIOP itself needs (CodeSets,
//! BI_DIR_IIOP) can be decoded and built.

use corbina_cdr::{ByteOrder, CdrReader, CdrWriter, CodeSetId};

use crate::encap;
use crate::error::Result;

/// `IOP::CodeSets`: the transmission code sets the client chose.
pub const CODE_SETS: u32 = 1;
/// `IOP::BI_DIR_IIOP`: the client's listen points, so the server may call back.
pub const BI_DIR_IIOP: u32 = 5;
/// `IOP::SendingContextRunTime`: the sender's CodeBase object for valuetypes.
pub const SENDING_CONTEXT_RUN_TIME: u32 = 6;

/// One service context: an id and its encapsulated data, kept byte for byte.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ServiceContext {
    /// `context_id`.
    pub context_id: u32,
    /// `context_data`: an encapsulation (byte-order octet included) for the standard ids.
    pub context_data: Vec<u8>,
}

/// What a service context holds, for the ids this crate understands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KnownServiceContext<'a> {
    /// `CodeSets` (id 1).
    CodeSets(CodeSetContext),
    /// `BI_DIR_IIOP` (id 5).
    BiDirIiop(Vec<ListenPoint>),
    /// `SendingContextRunTime` (id 6), opaque: an encapsulated IOR of a CodeBase.
    SendingContextRunTime(&'a [u8]),
    /// Any other id, left as it came.
    Other(&'a ServiceContext),
}

impl ServiceContext {
    /// Decodes the data of the contexts this crate knows.
    pub fn decode_known(&self) -> Result<KnownServiceContext<'_>> {
        Ok(match self.context_id {
            CODE_SETS => KnownServiceContext::CodeSets(CodeSetContext::decode_data(self)?),
            BI_DIR_IIOP => {
                KnownServiceContext::BiDirIiop(decode_listen_points(&self.context_data)?)
            }
            SENDING_CONTEXT_RUN_TIME => {
                KnownServiceContext::SendingContextRunTime(&self.context_data)
            }
            _ => KnownServiceContext::Other(self),
        })
    }

    /// A BI_DIR_IIOP context listing `points`, encapsulated in `order`.
    pub fn bi_dir_iiop(points: &[ListenPoint], order: ByteOrder) -> Result<ServiceContext> {
        let context_data = encap::write(order, |w| {
            w.write_length(points.len())?;
            for p in points {
                encap::write_latin1(w, &p.host)?;
                w.write_ushort(p.port);
            }
            Ok(())
        })?;
        Ok(ServiceContext {
            context_id: BI_DIR_IIOP,
            context_data,
        })
    }
}

/// `IIOP::ListenPoint`: an address the sender of a BI_DIR_IIOP context accepts calls on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ListenPoint {
    /// Host name or address.
    pub host: String,
    /// TCP port.
    pub port: u16,
}

/// The listen points of a BI_DIR_IIOP context's data (`IIOP::BiDirIIOPServiceContext`).
pub fn decode_listen_points(context_data: &[u8]) -> Result<Vec<ListenPoint>> {
    let mut r = encap::reader(context_data)?;
    // A ListenPoint is at least a 5-byte string and a port: the count is checked against
    // the bytes left before anything is allocated.
    let n = r.read_length(7)?;
    let mut points = Vec::with_capacity(n);
    for _ in 0..n {
        let host = encap::read_latin1(&mut r)?;
        let port = r.read_ushort()?;
        points.push(ListenPoint { host, port });
    }
    r.expect_end()?;
    Ok(points)
}

/// `CONV_FRAME::CodeSetContext`: the transmission code sets for `char` and `wchar` data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CodeSetContext {
    /// Transmission code set for `char`/`string`.
    pub char_data: CodeSetId,
    /// Transmission code set for `wchar`/`wstring`.
    pub wchar_data: CodeSetId,
}

impl CodeSetContext {
    /// Decodes a CodeSets service context's data.
    pub fn decode_data(sc: &ServiceContext) -> Result<CodeSetContext> {
        Self::decode_bytes(&sc.context_data)
    }

    /// Decodes a CodeSets service context's data given as bytes (encapsulation).
    pub fn decode_bytes(data: &[u8]) -> Result<CodeSetContext> {
        let mut r = encap::reader(data)?;
        let char_data = CodeSetId(r.read_ulong()?);
        let wchar_data = CodeSetId(r.read_ulong()?);
        r.expect_end()?;
        Ok(CodeSetContext {
            char_data,
            wchar_data,
        })
    }

    /// The CodeSets service context for these code sets, encapsulated in `order`.
    pub fn to_service_context(&self, order: ByteOrder) -> Result<ServiceContext> {
        let context_data = encap::write(order, |w| {
            w.write_ulong(self.char_data.0);
            w.write_ulong(self.wchar_data.0);
            Ok(())
        })?;
        Ok(ServiceContext {
            context_id: CODE_SETS,
            context_data,
        })
    }
}

/// `IOP::ServiceContextList`, in the order the sender wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ServiceContextList(pub Vec<ServiceContext>);

impl ServiceContextList {
    /// An empty list.
    pub fn new() -> Self {
        ServiceContextList(Vec::new())
    }

    /// Reads a list.
    #[inline]
    pub fn decode(r: &mut CdrReader<'_>) -> Result<ServiceContextList> {
        // Each context is at least an id and a length.
        let n = r.read_length(8)?;
        if n == 0 {
            // Almost every Reply and Request: nothing to set up or drop.
            return Ok(ServiceContextList(Vec::new()));
        }
        Self::decode_contexts(r, n)
    }

    /// The `n` contexts of a list that has some (out of line: the empty list is inlined).
    #[inline(never)]
    fn decode_contexts(r: &mut CdrReader<'_>, n: usize) -> Result<ServiceContextList> {
        let mut list = Vec::with_capacity(n);
        for _ in 0..n {
            let context_id = r.read_ulong()?;
            let context_data = r.read_octet_seq()?.to_vec();
            list.push(ServiceContext {
                context_id,
                context_data,
            });
        }
        Ok(ServiceContextList(list))
    }

    /// Writes the list.
    pub fn encode(&self, w: &mut CdrWriter<'_>) -> Result<()> {
        w.write_length(self.0.len())?;
        for sc in &self.0 {
            w.write_ulong(sc.context_id);
            w.write_length(sc.context_data.len())?;
            w.write_bytes(&sc.context_data);
        }
        Ok(())
    }

    /// The first context with this id.
    pub fn get(&self, context_id: u32) -> Option<&ServiceContext> {
        self.0.iter().find(|sc| sc.context_id == context_id)
    }

    /// The CodeSets context, decoded, if there is one.
    pub fn code_sets(&self) -> Result<Option<CodeSetContext>> {
        self.get(CODE_SETS)
            .map(CodeSetContext::decode_data)
            .transpose()
    }

    /// The BI_DIR_IIOP listen points, if there is such a context.
    pub fn bi_dir_iiop(&self) -> Result<Option<Vec<ListenPoint>>> {
        self.get(BI_DIR_IIOP)
            .map(|sc| decode_listen_points(&sc.context_data))
            .transpose()
    }

    /// Appends a context.
    pub fn push(&mut self, sc: ServiceContext) {
        self.0.push(sc);
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The number of contexts.
    pub fn len(&self) -> usize {
        self.0.len()
    }
}

/// An `IOP::ServiceContextList` left in the message: checked when the header is decoded,
/// read in place afterwards (no allocation). See [`crate::RequestHeaderView`].
#[derive(Debug, Clone)]
pub struct ServiceContextsView<'a> {
    /// Positioned just after the count; `None` for an empty list (what every request of
    /// the short path has: no reader is built for it).
    reader: Option<CdrReader<'a>>,
    count: usize,
}

impl<'a> ServiceContextsView<'a> {
    /// Reads past a list, checking it as [`ServiceContextList::decode`] does.
    pub fn decode(r: &mut CdrReader<'a>) -> Result<ServiceContextsView<'a>> {
        let count = r.read_length(8)?;
        let reader = r.clone();
        for _ in 0..count {
            r.read_ulong()?;
            r.read_octet_seq()?;
        }
        Ok(ServiceContextsView {
            reader: Some(reader),
            count,
        })
    }

    /// An empty list.
    pub(crate) fn empty() -> ServiceContextsView<'a> {
        ServiceContextsView {
            reader: None,
            count: 0,
        }
    }

    /// The number of contexts.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Each context's id and data, in order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &'a [u8])> + '_ {
        let mut r = self.reader.clone();
        (0..self.count).map_while(move |_| {
            let r = r.as_mut()?;
            // Checked by `decode`: these reads cannot fail.
            let id = r.read_ulong().ok()?;
            let data = r.read_octet_seq().ok()?;
            Some((id, data))
        })
    }

    /// The data of the first context with this id.
    pub fn get(&self, context_id: u32) -> Option<&'a [u8]> {
        self.iter()
            .find(|&(id, _)| id == context_id)
            .map(|(_, data)| data)
    }

    /// The CodeSets context, decoded, if there is one.
    pub fn code_sets(&self) -> Result<Option<CodeSetContext>> {
        self.get(CODE_SETS)
            .map(CodeSetContext::decode_bytes)
            .transpose()
    }

    /// The BI_DIR_IIOP listen points, if there is such a context.
    pub fn bi_dir_iiop(&self) -> Result<Option<Vec<ListenPoint>>> {
        self.get(BI_DIR_IIOP).map(decode_listen_points).transpose()
    }

    /// The list as an owned [`ServiceContextList`].
    pub fn to_list(&self) -> ServiceContextList {
        ServiceContextList(
            self.iter()
                .map(|(context_id, data)| ServiceContext {
                    context_id,
                    context_data: data.to_vec(),
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use corbina_cdr::{CdrContext, MarshalError};

    #[test]
    fn code_sets_context_from_omniorb() {
        // omniORB's little-endian CodeSets context: UTF-8 / UTF-16.
        let sc = ServiceContext {
            context_id: CODE_SETS,
            context_data: hex::decode("010000000100010509010100").unwrap(),
        };
        let cs = CodeSetContext::decode_data(&sc).unwrap();
        assert_eq!(
            cs,
            CodeSetContext {
                char_data: CodeSetId::UTF_8,
                wchar_data: CodeSetId::UTF_16
            }
        );
        assert_eq!(cs.to_service_context(ByteOrder::Little).unwrap(), sc);
        let be = cs.to_service_context(ByteOrder::Big).unwrap();
        assert_eq!(hex::encode(&be.context_data), "000000000501000100010109");
    }

    #[test]
    fn list_round_trip_keeps_unknown_contexts() {
        let list = ServiceContextList(vec![
            CodeSetContext {
                char_data: CodeSetId::UTF_8,
                wchar_data: CodeSetId::UTF_16,
            }
            .to_service_context(ByteOrder::Big)
            .unwrap(),
            ServiceContext {
                context_id: 0x4a41_4301,
                context_data: vec![0, 0, 0, 0],
            },
            ServiceContext::bi_dir_iiop(
                &[ListenPoint {
                    host: "10.0.0.1".into(),
                    port: 2809,
                }],
                ByteOrder::Big,
            )
            .unwrap(),
        ]);
        let mut w = CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::GIOP_1_2);
        list.encode(&mut w).unwrap();
        let bytes = w.into_bytes();
        assert_eq!(
            &bytes[..16],
            [0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 12, 0, 0, 0, 0]
        );
        let mut r = CdrReader::new(&bytes, ByteOrder::Big, CdrContext::GIOP_1_2);
        let back = ServiceContextList::decode(&mut r).unwrap();
        r.expect_end().unwrap();
        assert_eq!(back, list);
        let points = back.bi_dir_iiop().unwrap().unwrap();
        assert_eq!(points[0].port, 2809);
        assert!(matches!(
            back.0[1].decode_known(),
            Ok(KnownServiceContext::Other(_))
        ));
    }

    #[test]
    fn hostile_lengths() {
        let bytes = [0xff, 0xff, 0xff, 0xff];
        let mut r = CdrReader::new(&bytes, ByteOrder::Big, CdrContext::GIOP_1_2);
        assert!(matches!(
            ServiceContextList::decode(&mut r),
            Err(crate::GiopError::Marshal(
                MarshalError::LengthExceedsData { .. }
            ))
        ));
        let sc = ServiceContext {
            context_id: CODE_SETS,
            context_data: vec![2, 0, 0],
        };
        assert!(CodeSetContext::decode_data(&sc).is_err());
    }
}
