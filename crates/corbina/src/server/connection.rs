//! One server connection: read a request, demultiplex it, run the upcall, write the reply.
//! In the default model each connection has its own thread (omniORB2's thread per
//! connection, no thread switch on the call path); the pool ([`super::pool`]) runs the same
//! [`Connection::handle`] on whichever pool thread found the connection readable.

use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::{RequestDispatcher, ServerShared};
use crate::cdr::{ByteOrder, CdrWriter, CodeSets};
use crate::giop::{
    close_connection, message_error, GiopMessage, GiopMessageView, LocateReplyHeader, LocateStatus,
    MessageWriter, ReplyHeader, ReplyStatus, Version,
};
use crate::poa::{DispatchError, LocateOutcome};
use crate::servant::{ReplyKind, ReplySink, ServerRequest};
use crate::transport::{
    read_message_into, write_message, write_segments, Connection as Transport, ReadError, Stream,
};
use crate::{CompletionStatus, SystemException, SystemExceptionKind};

/// The part of a connection other threads touch: its writer and its closing state, under
/// one lock so that an orderly close never overtakes a reply in progress.
pub(crate) struct ConnectionShared {
    state: Mutex<ConnState>,
}

struct ConnState {
    stream: Stream,
    /// A request is being processed: CloseConnection must wait for its reply.
    busy: bool,
    /// Close requested (ORB shutdown, idle scavenger): done at the next idle moment.
    closing: bool,
    closed: bool,
    version: Version,
    last_active: Instant,
    idle_scans: u8,
}

impl ConnectionShared {
    /// Asks for an orderly close: CloseConnection now if idle, else after the current reply.
    pub(crate) fn close_gracefully(&self) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        st.closing = true;
        if !st.busy {
            close_now(&mut st);
        }
    }

    /// One scavenger scan: connections found idle on two consecutive scans are closed.
    pub(crate) fn scavenge(&self, period: std::time::Duration) -> bool {
        let Ok(mut st) = self.state.lock() else {
            return false;
        };
        if st.closed {
            return true;
        }
        if st.busy || st.last_active.elapsed() < period {
            st.idle_scans = 0;
            return false;
        }
        st.idle_scans += 1;
        if st.idle_scans >= 2 {
            st.closing = true;
            close_now(&mut st);
            return true;
        }
        false
    }
}

fn close_now(st: &mut ConnState) {
    if st.closed {
        return;
    }
    st.closed = true;
    let msg = close_connection(st.version, ByteOrder::NATIVE);
    let _ = st.stream.write_all(&msg);
    // Stop reading: the connection thread sees end of stream and exits.
    let _ = st.stream.shutdown(Shutdown::Both);
}

/// Sets up an accepted connection (transport options were applied by its listener): its
/// shared half (registered with the server, so shutdown and the scavenger reach it), its
/// request handler and its read half.
pub(crate) fn open(
    conn: Arc<dyn Transport>,
    dispatcher: Arc<dyn RequestDispatcher>,
    server: Arc<ServerShared>,
) -> (Connection, Stream) {
    let stream = Stream(conn);
    let read_half = stream.clone();
    let shared = Arc::new(ConnectionShared {
        state: Mutex::new(ConnState {
            stream,
            busy: false,
            closing: false,
            closed: false,
            version: Version::V1_2,
            last_active: Instant::now(),
            idle_scans: 0,
        }),
    });
    if !server.register(&shared) {
        // The server is shutting down: tell the client at once.
        shared.close_gracefully();
    }
    let conn = Connection {
        shared,
        dispatcher,
        server: server.clone(),
        code_sets: CodeSets::DEFAULT,
        reassembler: crate::giop::Reassembler::new(server.config.max_message_size as usize),
        spare_in: Vec::new(),
        out: Vec::with_capacity(256),
    };
    (conn, read_half)
}

/// Serves one accepted connection on this thread until it closes (thread per connection).
pub(crate) fn serve(
    stream: Arc<dyn Transport>,
    dispatcher: Arc<dyn RequestDispatcher>,
    server: Arc<ServerShared>,
) {
    let (mut conn, read_half) = open(stream, dispatcher, server.clone());
    let mut reader = MessageReader::new(read_half);
    loop {
        let buffer = std::mem::take(&mut conn.spare_in);
        let m = match read_message_into(&mut reader, server.config.max_message_size, buffer) {
            Ok(m) => m,
            Err(ReadError::Malformed(_)) => {
                conn.message_error(Version::V1_0);
                break;
            }
            Err(_) => break,
        };
        reader.last_message_len(m.bytes().len());
        if !conn.handle(m) {
            break;
        }
    }
    conn.finish();
}

/// Messages at least this long are read without staging their bytes in
/// [`MessageReader`]'s buffer.
const DIRECT_READ: usize = 16 * 1024;

/// The read half of a thread-per-connection connection: a `BufReader` that keeps large
/// messages out of its buffer. Small messages (null calls, short oneways in a burst) come
/// in several at a time with one system call, as through a 64 KB `BufReader`; a large body
/// is read straight into the message's own buffer, and after a large message the next
/// header is read on its own, so that the next large body is not first pulled into the
/// staging buffer and copied a second time (with a plain `BufReader`, nearly every byte
/// of a stream of 64 KB requests was copied twice).
struct MessageReader<R> {
    inner: R,
    buf: Box<[u8]>,
    pos: usize,
    filled: usize,
    /// In or just after a large message: read unbuffered until a small one comes.
    large: bool,
}

impl<R: Read> MessageReader<R> {
    fn new(inner: R) -> Self {
        MessageReader {
            inner,
            buf: vec![0; 64 * 1024].into_boxed_slice(),
            pos: 0,
            filled: 0,
            large: false,
        }
    }

    /// Tells the reader how long the message just read was (the buffering policy for the
    /// next one).
    fn last_message_len(&mut self, len: usize) {
        self.large = len >= DIRECT_READ;
    }
}

impl<R: Read> Read for MessageReader<R> {
    fn read(&mut self, dst: &mut [u8]) -> io::Result<usize> {
        // A large read is a large body: its remainder, however short, and the header after
        // it are read unbuffered too.
        self.large |= dst.len() >= DIRECT_READ;
        if self.pos == self.filled {
            if self.large {
                return self.inner.read(dst);
            }
            self.pos = 0;
            self.filled = 0;
            self.filled = self.inner.read(&mut self.buf)?;
        }
        let n = dst.len().min(self.filled - self.pos);
        dst[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// The request handler of one connection: what both thread models run for each message.
pub(crate) struct Connection {
    shared: Arc<ConnectionShared>,
    dispatcher: Arc<dyn RequestDispatcher>,
    server: Arc<ServerShared>,
    code_sets: CodeSets,
    reassembler: crate::giop::Reassembler,
    /// Buffers reused for every message: the last request's bytes (the next request is
    /// read into them) and the reply being marshalled. No allocation per call.
    spare_in: Vec<u8>,
    out: Vec<u8>,
}

impl Connection {
    /// Handles one message read off the connection; false when the connection must close
    /// (MessageError or CloseConnection was sent, the peer closed, or a write failed).
    pub(crate) fn handle(&mut self, m: crate::giop::Message) -> bool {
        let version = m.header().version;
        let m = match self.reassembler.push(m) {
            Ok(Some(m)) => m,
            Ok(None) => return true,
            Err(_) => {
                self.message_error(version);
                return false;
            }
        };
        let keep_going = self.handle_whole(&m, version);
        self.spare_in = crate::transport::recycle(m.into_bytes());
        keep_going
    }

    fn handle_whole(&mut self, m: &crate::giop::Message, version: Version) -> bool {
        // The Request header is read in place: no allocation for its operation, object key
        // or service contexts.
        // Matched in place: the view is a large value and moving it out costs a memcpy.
        let decoded = m.decode_view();
        let decoded = match &decoded {
            Ok(d) => d,
            Err(_) => {
                self.message_error(version);
                return false;
            }
        };
        match decoded {
            GiopMessageView::Request { header, body } => {
                if !self.begin(version) {
                    // Closing: CloseConnection was sent and this request is not processed;
                    // the client resends it on a new connection.
                    return false;
                }
                if let Ok(Some(cs)) = header.service_context.code_sets() {
                    self.code_sets = crate::codeset::from_context(cs.char_data, cs.wchar_data);
                }
                let key = header.target.resolve_key().ok().flatten();
                let mut sink = ConnectionReplySink {
                    shared: &self.shared,
                    out: &mut self.out,
                    version,
                    request_id: header.request_id,
                    code_sets: self.code_sets,
                    fragment_size: self.server.config.fragment_size,
                    left_busy: false,
                };
                let response_expected = header.response_expected();
                let mut req = ServerRequest::new(
                    &header.operation,
                    body.reader(self.code_sets),
                    response_expected,
                    &mut sink,
                );
                let result = match &key {
                    Some(k) => self.dispatcher.dispatch(k, &mut req),
                    None => Err(DispatchError::System(SystemException::new(
                        SystemExceptionKind::ObjectNotExist,
                        0,
                    ))),
                };
                let replied = req.has_replied();
                let mut ok = true;
                if response_expected && !replied {
                    let outcome = match result {
                        Ok(()) => sink.system_exception(
                            SystemException::new(SystemExceptionKind::Internal, 0)
                                .completed(CompletionStatus::Maybe),
                        ),
                        Err(DispatchError::System(e)) => sink.system_exception(e),
                        Err(DispatchError::Forward {
                            reference,
                            permanent,
                        }) => sink.forward(reference.ior(), permanent),
                    };
                    ok = outcome.is_ok();
                }
                // Always leave the busy state, so that a close asked for meanwhile happens.
                // A written reply already did (and made any such close): no second lock.
                if sink.left_busy {
                    ok
                } else {
                    self.end() && ok
                }
            }
            GiopMessageView::Other(GiopMessage::LocateRequest(h)) => {
                let outcome = match h.target.resolve_key().ok().flatten() {
                    Some(k) => self.dispatcher.locate(k.as_bytes()),
                    None => LocateOutcome::Unknown,
                };
                self.locate_reply(version, h.request_id, outcome).is_ok()
            }
            GiopMessageView::Other(GiopMessage::CancelRequest(_)) => {
                // Requests on a connection run in order: a cancelled one has either
                // finished or will be answered normally.
                true
            }
            GiopMessageView::Other(GiopMessage::CloseConnection | GiopMessage::MessageError) => {
                false
            }
            _ => {
                self.message_error(version);
                false
            }
        }
    }

    /// The connection is over: closes the socket and tells the server.
    pub(crate) fn finish(&self) {
        if let Ok(mut st) = self.shared.state.lock() {
            st.closed = true;
            let _ = st.stream.shutdown(Shutdown::Both);
        }
        self.server.unregister(&self.shared);
    }

    /// Marks the connection busy; false if it is closing.
    fn begin(&self, version: Version) -> bool {
        let Ok(mut st) = self.shared.state.lock() else {
            return false;
        };
        st.version = version;
        if st.closing || st.closed {
            return false;
        }
        // No clock read: `last_active` is not looked at while busy, and every path that
        // clears `busy` (the reply, `end`) stamps it.
        st.busy = true;
        true
    }

    /// Marks the connection idle again; closes it now if a close was asked for meanwhile.
    fn end(&self) -> bool {
        let Ok(mut st) = self.shared.state.lock() else {
            return false;
        };
        // A twoway's reply already cleared `busy` and stamped `last_active`.
        if st.busy {
            st.busy = false;
            st.last_active = Instant::now();
        }
        if st.closing {
            close_now(&mut st);
            return false;
        }
        true
    }

    pub(crate) fn message_error(&self, version: Version) {
        if let Ok(mut st) = self.shared.state.lock() {
            let _ = st
                .stream
                .write_all(&message_error(version, ByteOrder::NATIVE));
            st.closed = true;
            let _ = st.stream.shutdown(Shutdown::Both);
        }
    }

    fn locate_reply(
        &self,
        version: Version,
        request_id: u32,
        outcome: LocateOutcome,
    ) -> Result<(), SystemException> {
        let (status, ior) = match outcome {
            LocateOutcome::Here => (LocateStatus::ObjectHere, None),
            LocateOutcome::Unknown => (LocateStatus::UnknownObject, None),
            LocateOutcome::Forward { ior, permanent } => {
                let perm = permanent && version.minor >= 2;
                let s = if perm {
                    LocateStatus::ObjectForwardPerm
                } else {
                    LocateStatus::ObjectForward
                };
                (s, Some(ior))
            }
        };
        let h = LocateReplyHeader {
            request_id,
            locate_status: status,
        };
        let mut mw = MessageWriter::locate_reply(version, ByteOrder::NATIVE, self.code_sets, &h)
            .map_err(SystemException::from)?;
        if let Some(ior) = ior {
            ior.encode(mw.writer()).map_err(SystemException::from)?;
        }
        let w = mw.finish().map_err(SystemException::from)?;
        let mut st = self.shared.state.lock().map_err(|_| io_failure())?;
        if st.closed {
            return Err(io_failure());
        }
        write_message(&mut st.stream, &w).map_err(|_| io_failure())
    }
}

fn to_marshal(e: crate::giop::GiopError) -> crate::cdr::MarshalError {
    match e {
        crate::giop::GiopError::Marshal(m) => m,
        _ => crate::cdr::MarshalError::InvalidValue {
            offset: 0,
            reason: "unencodable GIOP value",
        },
    }
}

fn io_failure() -> SystemException {
    SystemException::new(SystemExceptionKind::CommFailure, 0).completed(CompletionStatus::Yes)
}

/// Writes replies for one request onto its connection.
struct ConnectionReplySink<'c> {
    shared: &'c ConnectionShared,
    out: &'c mut Vec<u8>,
    version: Version,
    request_id: u32,
    code_sets: CodeSets,
    fragment_size: Option<u32>,
    /// The reply was written and the connection left the busy state (closing it if a close
    /// was asked for): what [`Connection::end`] would do is done.
    left_busy: bool,
}

impl ConnectionReplySink<'_> {
    fn send<'a>(
        &mut self,
        status: ReplyStatus,
        body: &mut dyn FnMut(&mut CdrWriter<'a>) -> crate::cdr::Result<()>,
    ) -> Result<(), SystemException> {
        let done = CompletionStatus::Yes;
        let h = ReplyHeader::new(self.request_id, status);
        let buffer = std::mem::take(self.out);
        let mut mw =
            MessageWriter::reply_in(buffer, self.version, ByteOrder::NATIVE, self.code_sets, &h)
                .map_err(|e| SystemException::from(e).completed(done))?;
        let header_len = mw.writer().len();
        {
            let w = mw.body();
            let padded = w.len();
            body(w).map_err(|e| SystemException::from(e).completed(done))?;
            if w.len() == padded {
                w.truncate(header_len);
            }
        }
        let w = mw
            .finish()
            .map_err(|e| SystemException::from(e).completed(done))?;
        let mut st = self.shared.state.lock().map_err(|_| io_failure())?;
        let written = match self.fragment_size {
            Some(max) if self.version.minor >= 1 && w.len() > max as usize => {
                match crate::giop::fragment_message(&w.segments(), max as usize) {
                    Ok(frags) => frags
                        .iter()
                        .try_for_each(|f| write_segments(&mut st.stream, &f.io_slices())),
                    Err(_) => return Err(io_failure()),
                }
            }
            _ => write_message(&mut st.stream, &w),
        };
        // Answered: the connection is idle as far as closing goes from here on (the client
        // may act on the reply before this thread gets to `end`), so an orderly close asked
        // for now is done at once — after the reply, never before it.
        st.busy = false;
        st.last_active = Instant::now();
        if st.closing {
            close_now(&mut st);
        }
        self.left_busy = true;
        drop(st);
        *self.out = crate::transport::recycle(w.into_owned_buffer());
        written.map_err(|_| io_failure())
    }

    fn system_exception(&mut self, e: SystemException) -> Result<(), SystemException> {
        let body = e.to_body();
        self.send(ReplyStatus::SystemException, &mut |w| {
            body.encode(w).map_err(to_marshal)
        })
    }

    fn forward(&mut self, ior: &crate::giop::Ior, permanent: bool) -> Result<(), SystemException> {
        let status = if permanent && self.version.minor >= 2 {
            ReplyStatus::LocationForwardPerm
        } else {
            ReplyStatus::LocationForward
        };
        self.send(status, &mut |w| ior.encode(w).map_err(to_marshal))
    }
}

impl ReplySink for ConnectionReplySink<'_> {
    fn reply<'a>(
        &mut self,
        kind: ReplyKind,
        body: &mut dyn FnMut(&mut CdrWriter<'a>) -> crate::cdr::Result<()>,
    ) -> Result<(), SystemException> {
        let status = match kind {
            ReplyKind::NoException => ReplyStatus::NoException,
            ReplyKind::UserException => ReplyStatus::UserException,
        };
        self.send(status, body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream handing out at most `chunk` bytes per read, remembering each read's size.
    struct Chunked {
        data: Vec<u8>,
        at: usize,
        chunk: usize,
        reads: Vec<usize>,
    }

    impl Read for Chunked {
        fn read(&mut self, dst: &mut [u8]) -> io::Result<usize> {
            let n = dst.len().min(self.chunk).min(self.data.len() - self.at);
            dst[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            self.reads.push(dst.len());
            Ok(n)
        }
    }

    #[test]
    fn message_reader_keeps_order_and_reads_large_bodies_directly() {
        // Frames of a 4-byte length and that many bytes: small, large, large, small.
        let lens = [10usize, 100_000, 70_000, 3, 20_000, 1];
        let mut data = Vec::new();
        for (k, &len) in lens.iter().enumerate() {
            data.extend_from_slice(&(len as u32).to_le_bytes());
            data.extend((0..len).map(|i| (i * 7 + k) as u8));
        }
        let mut r = MessageReader::new(Chunked {
            data: data.clone(),
            at: 0,
            chunk: 50_000,
            reads: Vec::new(),
        });
        let mut got = Vec::new();
        for &len in &lens {
            let mut head = [0u8; 4];
            r.read_exact(&mut head).unwrap();
            assert_eq!(u32::from_le_bytes(head) as usize, len);
            let mut body = vec![0u8; len];
            r.read_exact(&mut body).unwrap();
            got.extend_from_slice(&head);
            got.extend_from_slice(&body);
            r.last_message_len(len + 4);
        }
        assert_eq!(got, data, "bytes out of order or lost");
        let mut rest = [0u8; 1];
        assert_eq!(r.read(&mut rest).unwrap(), 0, "end of stream");
        // After a large message the next header is read on its own (a 4-byte read), not
        // through the 64 KB buffer.
        assert!(r.inner.reads.contains(&4), "{:?}", r.inner.reads);
        // Only headers after a small message filled the buffer: the first, the one after
        // the 3-byte message, and the end-of-stream probe after the 1-byte one.
        assert_eq!(
            r.inner.reads.iter().filter(|&&n| n == 64 * 1024).count(),
            3,
            "{:?}",
            r.inner.reads
        );
        // Large remainders went straight into the caller's buffer.
        assert!(
            r.inner
                .reads
                .iter()
                .any(|n| (DIRECT_READ..64 * 1024).contains(n)),
            "{:?}",
            r.inner.reads
        );
    }
}
