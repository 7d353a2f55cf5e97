//! One server connection: read a request, demultiplex it, run the upcall, write the reply.
//! In the default model each connection has its own thread (omniORB2's thread per
//! connection, no thread switch on the call path); the pool ([`super::pool`]) runs the same
//! [`Connection::handle`] on whichever pool thread found the connection readable.

use std::io::{Read, Write};
use std::net::Shutdown;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::{RequestDispatcher, ServerShared};
use crate::cdr::{ByteOrder, CdrWriter};
use crate::giop::connection::{
    ConnectionError, Event, GiopConnection, Outgoing, ReplyContext, Role, Settings,
};
use crate::giop::{close_connection, LocateStatus, ReplyStatus, Version};
use crate::poa::{DispatchError, LocateOutcome};
use crate::servant::{ReplyKind, ReplySink, ServerRequest};
use crate::transport::{write_outgoing, Connection as Transport, Stream};
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
        // A request that has arrived and is not read yet makes the connection busy too (a
        // fresh connection whose thread is slow to start is not closed under it).
        if st.busy || st.last_active.elapsed() < period || st.stream.has_pending_input() {
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
    let config = &server.config;
    let giop = GiopConnection::new(Settings {
        max_message_size: config.max_message_size,
        reassembly_limit: config.max_message_size as usize,
        fragment_size: config.fragment_size,
        ..Settings::new(Role::Server)
    });
    let conn = Connection {
        giop,
        handler: Handler {
            shared,
            dispatcher,
            server: server.clone(),
            out: Vec::with_capacity(256),
        },
    };
    (conn, read_half)
}

/// Serves one accepted connection on this thread until it closes (thread per connection):
/// read into the connection's receive buffer, handle every message that is complete.
pub(crate) fn serve(
    stream: Arc<dyn Transport>,
    dispatcher: Arc<dyn RequestDispatcher>,
    server: Arc<ServerShared>,
) {
    let (mut conn, mut read_half) = open(stream, dispatcher, server);
    while conn.handle_events() {
        match read_half.read(conn.giop.read_buf()) {
            Ok(0) => {
                conn.giop.end_of_stream();
                break;
            }
            Ok(n) => conn.giop.commit(n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    conn.handler.finish();
}

/// One server connection: its GIOP state and what handles its messages (both thread
/// models run [`Connection::handle_events`] after each read).
pub(crate) struct Connection {
    pub(crate) giop: GiopConnection,
    pub(crate) handler: Handler,
}

impl Connection {
    /// Handles every complete message received; false when the connection must close
    /// (MessageError or CloseConnection was sent, the peer closed, or a write failed).
    pub(crate) fn handle_events(&mut self) -> bool {
        loop {
            if self.giop.wants_input() {
                return true;
            }
            let keep_going = match self.giop.poll_event() {
                // No whole message after all; if the peer closed, nothing more comes.
                Ok(None) => return self.giop.is_open(),
                // By reference: the event stays where the poll built it (moving it is a
                // copy of its largest variant).
                Ok(Some(ref event)) => self.handler.handle(event),
                Err(e) => {
                    self.handler.failed(&mut self.giop, &e);
                    return false;
                }
            };
            if !keep_going {
                return false;
            }
        }
    }
}

/// What handles the events of one connection: everything but its GIOP state (so that an
/// event borrowing the receive buffer can be handled with it).
pub(crate) struct Handler {
    shared: Arc<ConnectionShared>,
    dispatcher: Arc<dyn RequestDispatcher>,
    server: Arc<ServerShared>,
    /// The buffer every reply is marshalled into: no allocation per call.
    out: Vec<u8>,
}

impl Handler {
    fn handle(&mut self, event: &Event<'_>) -> bool {
        match event {
            Event::Request {
                header,
                body,
                reply,
            } => {
                if !self.begin(reply.version) {
                    // Closing: CloseConnection was sent and this request is not processed;
                    // the client resends it on a new connection.
                    return false;
                }
                let key = header.target.resolve_key().ok().flatten();
                let reply = *reply;
                let mut sink = ConnectionReplySink {
                    shared: &self.shared,
                    out: &mut self.out,
                    reply,
                    left_busy: false,
                };
                let mut req = ServerRequest::new(
                    &header.operation,
                    body.reader(reply.code_sets),
                    reply.response_expected,
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
                if reply.response_expected && !replied {
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
            Event::LocateRequest { header, reply } => {
                let outcome = match header.target.resolve_key().ok().flatten() {
                    Some(k) => self.dispatcher.locate(k.as_bytes()),
                    None => LocateOutcome::Unknown,
                };
                self.locate_reply(reply, outcome).is_ok()
            }
            // Requests on a connection run in order: a cancelled one has either finished or
            // will be answered normally.
            Event::CancelRequest { .. } | Event::Fragment { .. } => true,
            Event::CloseConnection | Event::MessageError => false,
            // A client-role message on a server connection: refused by the connection
            // before it gets here.
            Event::Reply { .. } | Event::LocateReply { .. } => false,
        }
    }

    /// The connection failed on the peer's bytes: writes what it queued (MessageError),
    /// then closes.
    fn failed(&self, giop: &mut GiopConnection, _error: &ConnectionError) {
        if let Ok(mut st) = self.shared.state.lock() {
            while let Some(m) = giop.poll_transmit() {
                if st.closed || st.stream.write_all(m.as_bytes()).is_err() {
                    break;
                }
            }
            st.closed = true;
            let _ = st.stream.shutdown(Shutdown::Both);
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

    fn locate_reply(
        &mut self,
        reply: &ReplyContext,
        outcome: LocateOutcome,
    ) -> Result<(), SystemException> {
        let (status, ior) = match outcome {
            LocateOutcome::Here => (LocateStatus::ObjectHere, None),
            LocateOutcome::Unknown => (LocateStatus::UnknownObject, None),
            // Downgraded to OBJECT_FORWARD below GIOP 1.2 by the connection.
            LocateOutcome::Forward {
                ior,
                permanent: true,
            } => (LocateStatus::ObjectForwardPerm, Some(ior)),
            LocateOutcome::Forward { ior, .. } => (LocateStatus::ObjectForward, Some(ior)),
        };
        let buffer = std::mem::take(&mut self.out);
        let mut w = reply
            .start_locate_reply(buffer, status)
            .map_err(SystemException::from)?;
        if let Some(ior) = ior {
            ior.encode(w.body()).map_err(SystemException::from)?;
        }
        let w = reply.finish_reply(w).map_err(SystemException::from)?;
        let mut st = self.shared.state.lock().map_err(|_| io_failure())?;
        let written = if st.closed {
            Err(io_failure())
        } else {
            write_outgoing(&mut st.stream, None, &w).map_err(|_| io_failure())
        };
        drop(st);
        self.out = crate::transport::recycle(w.into_buffer());
        written
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
    reply: ReplyContext,
    /// The reply was written and the connection left the busy state (closing it if a close
    /// was asked for): what [`Handler::end`] would do is done.
    left_busy: bool,
}

impl ConnectionReplySink<'_> {
    fn send<'a>(
        &mut self,
        status: ReplyStatus,
        body: &mut dyn FnMut(&mut CdrWriter<'a>) -> crate::cdr::Result<()>,
    ) -> Result<(), SystemException> {
        let done = CompletionStatus::Yes;
        // Marshalled in one frame, in the connection's buffer (given back on failure).
        let w: Outgoing<'a> = self
            .reply
            .reply(self.out, status, |w| body(w).map_err(SystemException::from))
            .map_err(|e| e.completed(done))?;
        let mut st = self.shared.state.lock().map_err(|_| io_failure())?;
        let written = write_outgoing(&mut st.stream, None, &w);
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
        *self.out = crate::transport::recycle(w.into_buffer());
        written.map_err(|_| io_failure())
    }

    fn system_exception(&mut self, e: SystemException) -> Result<(), SystemException> {
        let body = e.to_body();
        self.send(ReplyStatus::SystemException, &mut |w| {
            body.encode(w).map_err(to_marshal)
        })
    }

    /// Downgraded to LOCATION_FORWARD below GIOP 1.2 by the connection.
    fn forward(&mut self, ior: &crate::giop::Ior, permanent: bool) -> Result<(), SystemException> {
        let status = if permanent {
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
