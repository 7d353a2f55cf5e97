//! One server connection: read a request, demultiplex it, run the upcall, write the reply.
//! In the default model each connection has its own thread (omniORB2's thread per
//! connection, no thread switch on the call path); the pool ([`super::pool`]) runs the same
//! [`Connection::handle`] on whichever pool thread found the connection readable.

use std::io::{Read, Write};
use std::net::Shutdown;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::{RequestDispatcher, ServerShared};
use crate::cdr::CdrWriter;
use crate::giop::connection::{
    CloseState, ConnectionError, ControlMessage, Event, GiopConnection, Outgoing, ReplyContext,
    Role, Settings,
};
use crate::giop::{LocateStatus, ReplyStatus, Version};
use crate::poa::{DispatchError, LocateOutcome};
use crate::servant::{DeferredReplySink, ReplyKind, ReplySink, ServerRequest};
use crate::transport::{write_outgoing, Connection as Transport, Stream};
use crate::{Error, SystemException};

pub(crate) mod intercepted;

/// The part of a connection other threads touch: its writer and its closing state, under
/// one lock so that an orderly close never overtakes a reply in progress.
pub(crate) struct ConnectionShared {
    state: Mutex<ConnState>,
    /// Itself, for a reply deferred past its upcall ([`crate::ReplyHandle`]).
    me: std::sync::Weak<ConnectionShared>,
    /// The client's authenticated identity (TLS with a client certificate), made
    /// available to the upcalls of its requests ([`super::peer_identity`]).
    peer: Option<Arc<super::PeerIdentity>>,
}

struct ConnState {
    stream: Stream,
    /// What is decided by the connection's state machine: requests being processed (one at
    /// most, except on a bidirectional connection, whose workers run several, and count
    /// the calls it carries back too), an orderly close asked for (ORB shutdown, idle
    /// scavenger) and done when they are over, a refusal; this only carries it out.
    close: CloseState,
    /// Requests (and calls carried back) ended, counted: the scavenger compares it from one
    /// scan to the next, so that no request reads the clock.
    ended: u32,
    /// `ended` at the last scan, and when a scan first saw it at that value (or the
    /// connection opened): the connection has been quiet since.
    ended_seen: u32,
    quiet_since: Instant,
    idle_scans: u8,
}

impl ConnectionShared {
    /// Asks for an orderly close: CloseConnection now if idle, else after the current reply.
    pub(crate) fn close_gracefully(&self) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        let m = st.close.close();
        carry_out(&mut st, m);
    }

    /// One scavenger scan: connections found idle on two consecutive scans are closed.
    pub(crate) fn scavenge(&self, period: std::time::Duration) -> bool {
        let Ok(mut st) = self.state.lock() else {
            return false;
        };
        if st.close.is_closed() {
            return true;
        }
        if st.ended != st.ended_seen {
            // Requests ended since the last scan: quiet (at most) since now.
            st.ended_seen = st.ended;
            st.quiet_since = Instant::now();
        }
        // A request that has arrived and is not read yet makes the connection busy too (a
        // fresh connection whose thread is slow to start is not closed under it).
        if st.close.is_busy() || st.quiet_since.elapsed() < period || st.stream.has_pending_input()
        {
            st.idle_scans = 0;
            return false;
        }
        st.idle_scans += 1;
        if st.idle_scans >= 2 {
            let m = st.close.close();
            carry_out(&mut st, m);
            return true;
        }
        false
    }
}

impl ConnectionShared {
    /// The shared half of connection `giop` on `stream`, its client authenticated as
    /// `peer`: the writers' share of its close state.
    fn new(
        stream: Stream,
        giop: &GiopConnection,
        peer: Option<Arc<super::PeerIdentity>>,
    ) -> Arc<ConnectionShared> {
        Arc::new_cyclic(|me| ConnectionShared {
            me: me.clone(),
            peer,
            state: Mutex::new(ConnState {
                stream,
                close: giop.close_state(),
                ended: 0,
                ended_seen: 0,
                quiet_since: Instant::now(),
                idle_scans: 0,
            }),
        })
    }

    /// The shared half of connection `giop`, which no server accepted (the client's end of
    /// a bidirectional connection).
    pub(crate) fn for_stream(stream: Stream, giop: &GiopConnection) -> Arc<ConnectionShared> {
        ConnectionShared::new(stream, giop, None)
    }

    /// Writes whole messages (a request, control messages) unless the connection is closed.
    pub(crate) fn write(&self, batch: Option<&[u8]>, w: &Outgoing<'_>) -> std::io::Result<()> {
        let mut st = self.lock()?;
        if st.close.is_closed() {
            return Err(std::io::ErrorKind::NotConnected.into());
        }
        write_outgoing(&mut st.stream, batch, w)
    }

    /// Writes one control message (CancelRequest, MessageError) unless closed.
    pub(crate) fn write_control(&self, bytes: &[u8]) -> std::io::Result<()> {
        let mut st = self.lock()?;
        if st.close.is_closed() {
            return Err(std::io::ErrorKind::NotConnected.into());
        }
        st.stream.write_all(bytes)
    }

    /// A call going out on this connection (bidirectional GIOP): the connection is busy
    /// until [`ConnectionShared::outgoing_done`].
    pub(crate) fn outgoing_started(&self) -> bool {
        self.lock().is_ok_and(|mut st| st.close.begin())
    }

    /// The call counted by [`ConnectionShared::outgoing_started`] is over.
    pub(crate) fn outgoing_done(&self) {
        if let Ok(mut st) = self.lock() {
            st.leave();
        }
    }

    /// Refuses the client's input (the server's memory budget is spent and this connection
    /// holds the most): MessageError, then closed; its reader sees the end and lets go of
    /// its buffers.
    pub(crate) fn refuse_input(&self) {
        if let Ok(mut st) = self.lock() {
            let m = st.close.refuse();
            carry_out(&mut st, m);
        }
    }

    /// Closes now, without CloseConnection (the connection failed, or its ORB is going).
    pub(crate) fn shut_down(&self) {
        if let Ok(mut st) = self.lock() {
            st.close.shut_down();
            let _ = st.stream.shutdown(Shutdown::Both);
        }
    }

    fn lock(&self) -> std::io::Result<std::sync::MutexGuard<'_, ConnState>> {
        self.state
            .lock()
            .map_err(|_| std::io::Error::other("connection lock poisoned"))
    }
}

impl ConnState {
    /// A request (or a call carried back) no longer holds the connection open: an orderly
    /// close asked for meanwhile is done once nothing else does.
    #[inline]
    fn leave(&mut self) {
        self.ended = self.ended.wrapping_add(1);
        if self.close.end() {
            let m = self.close.close_connection();
            carry_out(self, Some(m));
        }
    }
}

/// Writes what the close state decided to send (CloseConnection, MessageError), then
/// shuts the transport down; nothing when it decided nothing.
#[cold]
#[inline(never)]
fn carry_out(st: &mut ConnState, message: Option<ControlMessage>) {
    let Some(m) = message else {
        return;
    };
    let _ = st.stream.write_all(m.as_bytes());
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
    let peer = stream
        .peer_certificate_chain()
        .map(|chain| Arc::new(super::PeerIdentity { chain }));
    let config = &server.config;
    let mut giop = GiopConnection::new(Settings {
        max_message_size: config.max_message_size,
        reassembly_limit: config.max_message_size as usize,
        fragment_size: config.fragment_size,
        byte_order: config.byte_order,
        ..Settings::new(Role::Server)
    });
    let shared = ConnectionShared::new(stream, &giop, peer);
    if !server.register(&shared) {
        // The server is shutting down: tell the client at once.
        shared.close_gracefully();
    }
    giop.set_receive_meter(Box::new(server.receive_budget.share(&shared)));
    let conn = Connection {
        giop,
        handler: Handler {
            shared,
            dispatcher,
            server: server.clone(),
            interceptors: config.initializers.server(),
            out: Vec::with_capacity(256),
            bidir_offer: None,
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
    match conn.handler.bidir_offer.take() {
        Some(offer) => become_bidir(conn, read_half, offer),
        None => conn.handler.finish(),
    }
}

/// The client offered bidirectional GIOP and it was taken: this thread goes on as the
/// connection's reader, requests run on workers. Out of line: the read loop above stays
/// as small as it was (its receive-buffer calls inlined).
#[cold]
#[inline(never)]
fn become_bidir(mut conn: Connection, read_half: Stream, offer: crate::bidir::Offer) {
    let parts = conn.take_bidir_parts();
    crate::bidir::serve_accepted(parts, read_half, offer);
}

/// What a server connection hands to bidirectional GIOP when a client's offer is taken.
pub(crate) struct BidirParts {
    pub(crate) giop: GiopConnection,
    pub(crate) shared: Arc<ConnectionShared>,
    pub(crate) dispatcher: Arc<dyn RequestDispatcher>,
    pub(crate) server: Arc<ServerShared>,
}

/// A server connection is over: closes its socket and tells the server (both thread
/// models, and a bidirectional connection's reader).
pub(crate) fn finish_connection(shared: &Arc<ConnectionShared>, server: &ServerShared) {
    if let Ok(st) = shared.state.lock() {
        crate::trace::server_connection_closed(&*st.stream.0);
    }
    shared.shut_down();
    server.unregister(shared);
}

/// One server connection: its GIOP state and what handles its messages (both thread
/// models run [`Connection::handle_events`] after each read).
pub(crate) struct Connection {
    pub(crate) giop: GiopConnection,
    pub(crate) handler: Handler,
}

impl Connection {
    /// Moves the connection's state out for bidirectional GIOP (see [`BidirParts`]).
    pub(crate) fn take_bidir_parts(&mut self) -> BidirParts {
        let fresh = GiopConnection::new(*self.giop.settings());
        BidirParts {
            giop: std::mem::replace(&mut self.giop, fresh),
            shared: self.handler.shared.clone(),
            dispatcher: self.handler.dispatcher.clone(),
            server: self.handler.server.clone(),
        }
    }

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
    /// Server request interceptors, if any are registered.
    interceptors: Option<Arc<crate::interceptor::server::Registered>>,
    /// The buffer every reply is marshalled into: no allocation per call.
    out: Vec<u8>,
    /// A bidirectional GIOP offer taken: the request that carried it (not run yet) and the
    /// listen points. The connection stops being served here and becomes bidirectional.
    pub(crate) bidir_offer: Option<crate::bidir::Offer>,
}

impl Handler {
    fn handle(&mut self, event: &Event<'_>) -> bool {
        match event {
            Event::Request {
                header,
                body,
                reply,
            } => {
                let key = header.target.resolve_key().ok().flatten();
                let reply = *reply;
                // One bool when bidirectional GIOP is not accepted (the default).
                if self.server.bidir_client().is_some() {
                    if let Some(offer) = self.take_offer(header, *body, reply, key.as_deref()) {
                        self.bidir_offer = Some(offer);
                        return false;
                    }
                }
                // One load and branch when no server interceptor is registered.
                if let Some(pi) = &self.interceptors {
                    return intercepted::serve_intercepted(
                        &self.shared,
                        &*self.dispatcher,
                        &mut self.out,
                        pi,
                        &header.operation,
                        intercepted::ReceivedContexts::InMessage(header.service_context.clone()),
                        key.as_deref(),
                        body.reader(reply.code_sets),
                        reply,
                    );
                }
                serve_request(
                    &self.shared,
                    &*self.dispatcher,
                    &mut self.out,
                    &header.operation,
                    key.as_deref(),
                    body.reader(reply.code_sets),
                    reply,
                )
            }
            Event::LocateRequest { header, reply } => {
                let key = header.target.resolve_key().ok().flatten();
                let outcome = match &key {
                    Some(k) => self.dispatcher.locate(k.as_bytes()),
                    None => LocateOutcome::Unknown,
                };
                crate::trace::locate_answered(key.as_ref().map(|k| k.as_bytes()), &outcome);
                self.locate_reply(reply, outcome).is_ok()
            }
            // Requests on a connection run in order: a cancelled one has either finished or
            // will be answered normally.
            Event::CancelRequest { .. } => true,
            Event::Fragment { .. } => {
                crate::trace::fragment_received(&"client");
                true
            }
            Event::CloseConnection => {
                crate::trace::control_received("CloseConnection", &"client");
                false
            }
            Event::MessageError => {
                crate::trace::control_received("MessageError", &"client");
                false
            }
            // A client-role message on a server connection: refused by the connection
            // before it gets here.
            Event::Reply { .. } | Event::LocateReply { .. } => false,
        }
    }

    /// The offer of bidirectional GIOP a request makes, if it is taken: at GIOP 1.2, to a
    /// POA with `BidirectionalPolicy::Both`. A malformed BI_DIR_IIOP context is ignored
    /// (the request is served normally), as omniORB does.
    #[cold]
    #[inline(never)]
    fn take_offer(
        &self,
        header: &crate::giop::RequestHeaderView<'_>,
        body: crate::giop::message::Body<'_>,
        reply: ReplyContext,
        key: Option<&[u8]>,
    ) -> Option<crate::bidir::Offer> {
        let points = crate::giop::connection::bidir_offer(reply.version, &header.service_context)
            .ok()
            .flatten()?;
        if points.is_empty() || !key.is_some_and(|k| self.dispatcher.accepts_bidir(k)) {
            return None;
        }
        Some(crate::bidir::Offer {
            first: crate::bidir::IncomingRequest::copy(header, key, body, reply),
            listen_points: points,
        })
    }

    /// The connection failed on the peer's bytes: writes what it queued (MessageError),
    /// then closes.
    #[cold]
    #[inline(never)]
    fn failed(&self, giop: &mut GiopConnection, error: &ConnectionError) {
        crate::trace::protocol_failure(error);
        if let Ok(mut st) = self.shared.state.lock() {
            // What the connection queued goes out unless the close state closed it before.
            if st.close.shut_down() {
                while let Some(m) = giop.poll_transmit() {
                    if st.stream.write_all(m.as_bytes()).is_err() {
                        break;
                    }
                }
            }
            let _ = st.stream.shutdown(Shutdown::Both);
        }
    }

    /// The connection is over: closes the socket and tells the server.
    pub(crate) fn finish(&self) {
        finish_connection(&self.shared, &self.server);
    }

    fn locate_reply(
        &mut self,
        reply: &ReplyContext,
        outcome: LocateOutcome,
    ) -> Result<(), SystemException> {
        write_locate_reply(&self.shared, &mut self.out, reply, outcome)
    }
}

/// Answers a LocateRequest (both server models and bidirectional connections).
pub(crate) fn write_locate_reply(
    shared: &ConnectionShared,
    out: &mut Vec<u8>,
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
    let buffer = std::mem::take(out);
    let mut w = reply
        .start_locate_reply(buffer, status)
        .map_err(SystemException::from)?;
    if let Some(ior) = ior {
        ior.encode(w.body()).map_err(SystemException::from)?;
    }
    let w = reply.finish_reply(w).map_err(SystemException::from)?;
    let written = shared.write(None, &w).map_err(send_failed);
    *out = crate::transport::recycle(w.into_buffer());
    written
}

/// Runs one request and writes its reply (both server models, and the workers of a
/// bidirectional connection); false when the connection must close.
#[inline]
pub(crate) fn serve_request(
    shared: &ConnectionShared,
    dispatcher: &dyn RequestDispatcher,
    out: &mut Vec<u8>,
    operation: &str,
    key: Option<&[u8]>,
    args: crate::cdr::CdrReader<'_>,
    reply: ReplyContext,
) -> bool {
    if !begin(shared, reply.version) {
        // Closing: CloseConnection was sent and this request is not processed; the client
        // resends it on a new connection.
        return false;
    }
    let mut sink = ConnectionReplySink {
        shared,
        out,
        reply,
        left_busy: false,
    };
    let mut req = ServerRequest::new(operation, args, reply.response_expected, &mut sink);
    // One branch when the client is not authenticated (plain TCP, TLS without a client
    // certificate).
    let _peer = shared.peer.as_ref().map(super::PeerScope::enter);
    let result = match key {
        Some(k) => dispatcher.dispatch(k, &mut req),
        None => Err(DispatchError::System(Error::NoObjectKey.into())),
    };
    let replied = req.has_replied();
    let ok = if reply.response_expected && !replied {
        reply_for_outcome(&mut sink, result)
    } else {
        true
    };
    // Always leave the busy state, so that a close asked for meanwhile happens. A written
    // reply already did (and made any such close): no second lock.
    if sink.left_busy {
        ok
    } else {
        end(shared) && ok
    }
}

/// The reply of a twoway whose servant did not reply itself: a system exception or a
/// forward (out of line: the common upcall replies itself).
#[cold]
#[inline(never)]
fn reply_for_outcome(
    sink: &mut ConnectionReplySink<'_>,
    result: Result<(), DispatchError>,
) -> bool {
    let outcome = match result {
        Ok(()) => sink.system_exception(Error::NoReply.into()),
        Err(DispatchError::System(e)) => sink.system_exception(e),
        Err(DispatchError::Forward {
            reference,
            permanent,
        }) => sink.forward(reference.ior(), permanent),
    };
    outcome.is_ok()
}

/// Counts a request in; false if the connection is closing.
#[inline]
fn begin(shared: &ConnectionShared, version: Version) -> bool {
    let Ok(mut st) = shared.state.lock() else {
        return false;
    };
    // No clock read: the scavenger does not look at a busy connection, and every path that
    // ends a request (the reply, `end`) counts it.
    st.close.begin_request(version)
}

/// Counts a request that wrote no reply out; closes now if a close was asked for meanwhile
/// and nothing else is in progress.
fn end(shared: &ConnectionShared) -> bool {
    let Ok(mut st) = shared.state.lock() else {
        return false;
    };
    st.leave();
    !st.close.is_closing()
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

#[cold]
fn send_failed(source: std::io::Error) -> SystemException {
    Error::SendReply { source }.into()
}

/// A thread panicked while writing on this connection: its stream state is unknown.
#[cold]
fn poisoned() -> SystemException {
    send_failed(std::io::Error::other(
        "connection state poisoned by a panic",
    ))
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
        // Marshalled in one frame, in the connection's buffer (given back on failure).
        let w: Outgoing<'a> = self
            .reply
            .reply(self.out, status, |w| {
                body(w).map_err(crate::giop::GiopError::from)
            })
            .map_err(Error::EncodeReply)?;
        let mut st = self.shared.state.lock().map_err(|_| poisoned())?;
        // (A closed connection's socket is shut down: the write fails.)
        let written = write_outgoing(&mut st.stream, None, &w);
        // Answered: the request no longer holds the connection open (the client may act on
        // the reply before this thread gets to `end`), so an orderly close asked for now is
        // done at once — after the reply, never before it. (One reply per request: the
        // ServerRequest refuses a second.)
        st.leave();
        self.left_busy = true;
        drop(st);
        *self.out = crate::transport::recycle(w.into_buffer());
        written.map_err(send_failed)
    }

    fn system_exception(&mut self, e: SystemException) -> Result<(), SystemException> {
        let body = e.to_body();
        self.send(ReplyStatus::SystemException, &mut |w| {
            body.encode(w).map_err(to_marshal)
        })
    }

    /// A reply that could not be sent: when its body could not be encoded (a result nested
    /// too deep, say) nothing was sent, and the client still gets an answer, as for a
    /// deferred reply. Out of line: the reply path pays nothing for it.
    #[cold]
    #[inline(never)]
    fn reply_failed(&mut self, e: &SystemException) {
        if !self.left_busy {
            let _ = self.system_exception(e.clone());
        }
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
        let sent = self.send(status, body);
        if let Err(e) = &sent {
            self.reply_failed(e);
        }
        sent
    }

    fn detach(&mut self) -> Option<Box<dyn DeferredReplySink>> {
        let shared = self.shared.me.upgrade()?;
        // The request keeps the connection busy until the deferred reply leaves it.
        self.left_busy = true;
        Some(Box::new(DeferredConnectionReply {
            shared,
            reply: self.reply,
        }))
    }
}

/// A reply deferred past its upcall: written on the connection whenever it is given, from
/// any thread (the connection's writer is shared under its lock).
struct DeferredConnectionReply {
    shared: Arc<ConnectionShared>,
    reply: ReplyContext,
}

impl DeferredConnectionReply {
    /// Writes one reply through `write`, then leaves the busy state unless the sink already did.
    fn send(
        &self,
        write: impl FnOnce(&mut ConnectionReplySink<'_>) -> Result<(), SystemException>,
    ) -> Result<(), SystemException> {
        // Not the connection thread's buffer: that one serves later requests meanwhile.
        let mut out = Vec::new();
        let mut sink = ConnectionReplySink {
            shared: &self.shared,
            out: &mut out,
            reply: self.reply,
            left_busy: false,
        };
        let sent = write(&mut sink);
        if !sink.left_busy {
            end(&self.shared);
        }
        sent
    }
}

impl DeferredReplySink for DeferredConnectionReply {
    fn reply<'a>(
        &mut self,
        kind: ReplyKind,
        body: &mut dyn FnMut(&mut CdrWriter<'a>) -> crate::cdr::Result<()>,
    ) -> Result<(), SystemException> {
        self.send(|sink| {
            let sent = ReplySink::reply(sink, kind, body);
            if let Err(e) = &sent {
                if !sink.left_busy {
                    // The body could not be encoded: the client still gets an answer.
                    let _ = sink.system_exception(e.clone());
                }
            }
            sent
        })
    }

    fn system_exception(&mut self, e: SystemException) -> Result<(), SystemException> {
        self.send(|sink| sink.system_exception(e))
    }
}
