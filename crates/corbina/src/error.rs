//! What failed on the call path ([`Error`]), and the one mapping of those failures to the
//! CORBA system exceptions calls return: kind, minor code and completion status.
//!
//! A call returns a [`SystemException`] (that is what crosses the wire and what generated
//! stubs return); the runtime raises it from an [`Error`], kept as the exception's
//! [detail](SystemException::detail), so that its `Display` says what a user needs to act:
//!
//! ```text
//! TRANSIENT (minor 0x43420212, completed NO): connect to tcp 127.0.0.1:5002 failed: Connection refused (os error 111)
//! TIMEOUT (minor 0x43420221, completed MAYBE): receive from tcp 127.0.0.1:5002 timed out
//! ```
//!
//! Match on the kind and minor code, or downcast the detail:
//! `e.detail().and_then(|d| d.downcast_ref::<corbina::Error>())`. Peers only ever see
//! kind, minor and completion status.
//!
//! # Minor codes
//!
//! The OMG's standard minor codes (vendor id [`OMG_VMCID`](crate::cdr::OMG_VMCID),
//! `0x4f4d0000`, CORBA 3.x "Standard Minor Exception Codes") where one fits; Corbina's own
//! (vendor id [`CORBINA_VMCID`](crate::cdr::CORBINA_VMCID), `0x43420000`) for the rest, stable
//! across releases. Three of Corbina's codes predate that range and keep their values
//! (`0x43424e0x`). The runtime raises no exception with minor 0.
//!
//! | exception | minor | name | completed | meaning |
//! | --- | --- | --- | --- | --- |
//! | UNKNOWN | `0x4f4d0001` | [`UNKNOWN_USER_EXCEPTION`](minor::UNKNOWN_USER_EXCEPTION) | YES | OMG 1: the server raised a user exception the operation's `raises` clause does not list |
//! | BAD_PARAM | `0x4f4d000d` | [`BAD_PARAM_INCOMPLETE_TYPECODE`](minor::BAD_PARAM_INCOMPLETE_TYPECODE) | NO | OMG 13: a TypeCode operation needs a complete TypeCode (typecode factory) |
//! | BAD_PARAM | `0x4f4d000f` | [`BAD_PARAM_BAD_NAME`](minor::BAD_PARAM_BAD_NAME) | NO | OMG 15: a TypeCode's name is not a valid IDL identifier (typecode factory) |
//! | BAD_PARAM | `0x4f4d0010` | [`BAD_PARAM_BAD_REPOSITORY_ID`](minor::BAD_PARAM_BAD_REPOSITORY_ID) | NO | OMG 16: a TypeCode's repository id is malformed (typecode factory) |
//! | BAD_PARAM | `0x4f4d0011` | [`BAD_PARAM_BAD_MEMBER_NAME`](minor::BAD_PARAM_BAD_MEMBER_NAME) | NO | OMG 17: a TypeCode member name is invalid or repeated (typecode factory) |
//! | BAD_PARAM | `0x4f4d0012` | [`BAD_PARAM_DUPLICATE_LABEL`](minor::BAD_PARAM_DUPLICATE_LABEL) | NO | OMG 18: a union TypeCode repeats a label (typecode factory) |
//! | BAD_PARAM | `0x4f4d0013` | [`BAD_PARAM_INCOMPATIBLE_LABEL`](minor::BAD_PARAM_INCOMPATIBLE_LABEL) | NO | OMG 19: a union label's type is not the discriminator's (typecode factory) |
//! | BAD_PARAM | `0x4f4d0014` | [`BAD_PARAM_BAD_DISCRIMINATOR`](minor::BAD_PARAM_BAD_DISCRIMINATOR) | NO | OMG 20: a union discriminator type is not legitimate (typecode factory) |
//! | BAD_PARAM | `0x4f4d0015` | [`BAD_PARAM_NOT_AN_EXCEPTION`](minor::BAD_PARAM_NOT_AN_EXCEPTION) | NO | OMG 21: DSI `set_exception` with an `Any` that is not an exception |
//! | BAD_PARAM | `0x4f4d001a` | [`BAD_PARAM_NO_SERVICE_CONTEXT`](minor::BAD_PARAM_NO_SERVICE_CONTEXT) | NO | OMG 26: interceptors: no service context with that id |
//! | BAD_PARAM | `0x4f4d0007` | [`BAD_PARAM_BAD_SCHEME_NAME`](minor::BAD_PARAM_BAD_SCHEME_NAME) | NO | OMG 7: `string_to_object`: not an IOR or object URL |
//! | BAD_PARAM | `0x4f4d0008` | [`BAD_PARAM_BAD_ADDRESS`](minor::BAD_PARAM_BAD_ADDRESS) | NO | OMG 8: `string_to_object`: a `corbaloc:rir:` name that is not an initial reference |
//! | BAD_PARAM | `0x4f4d0009` | [`BAD_PARAM_BAD_SCHEME_SPECIFIC_PART`](minor::BAD_PARAM_BAD_SCHEME_SPECIFIC_PART) | NO | OMG 9: a URL's address cannot be encoded; `corbaname:` name invalid (`InvalidName`) |
//! | BAD_PARAM | `0x4f4d000a` | [`BAD_PARAM_BAD_URI_OTHER`](minor::BAD_PARAM_BAD_URI_OTHER) | NO | OMG 10: `corbaname:`: the naming service could not proceed (`CannotProceed`), or the corbaloc part is no naming context |
//! | BAD_PARAM | `0x434202a0` | [`BAD_PARAM_NOT_OF_TYPE`](minor::BAD_PARAM_NOT_OF_TYPE) | NO | narrow: the object does not implement the interface |
//! | BAD_PARAM | `0x434202a1` | [`BAD_PARAM_DII_ARGUMENT`](minor::BAD_PARAM_DII_ARGUMENT) | NO | DII: no such argument, an `in` argument without a value, or a value of another TypeCode |
//! | BAD_PARAM | `0x434202a2` | [`BAD_PARAM_NIL_CONTEXT`](minor::BAD_PARAM_NIL_CONTEXT) | NO | naming: `bind_context`/`rebind_context` given a nil context |
//! | BAD_PARAM | `0x434202a3` | [`BAD_PARAM_ZERO_HOW_MANY`](minor::BAD_PARAM_ZERO_HOW_MANY) | NO | naming: `BindingIterator::next_n(0)` |
//! | BAD_PARAM | `0x434202a4` | [`BAD_PARAM_TYPECODE_ARGUMENT`](minor::BAD_PARAM_TYPECODE_ARGUMENT) | NO | typecode factory: an argument the standard has no minor code for (an enum without enumerators, an array of length 0, a bad value modifier, visibility or concrete base, a box of a value type) |
//! | BAD_PARAM | `0x434202a8` | [`BAD_PARAM_NIL_EVENT_PEER`](minor::BAD_PARAM_NIL_EVENT_PEER) | NO | events: `connect_push_consumer`/`connect_pull_supplier` given a nil reference |
//! | TRANSIENT | `0x4f4d0001` | [`TRANSIENT_DISCARDING`](minor::TRANSIENT_DISCARDING) | NO | OMG 1: the POA manager discards requests (discarding, or held past the maximum wait) |
//! | TRANSIENT | `0x43420212` | [`TRANSIENT_CONNECT_FAILED`](minor::TRANSIENT_CONNECT_FAILED) | NO | connecting to the profile's endpoint failed (refused, unreachable, name not resolved; omniORB's TRANSIENT_ConnectFailed) |
//! | TRANSIENT | `0x43420210` | [`TRANSIENT_CONNECT_TIMEOUT`](minor::TRANSIENT_CONNECT_TIMEOUT) | NO | connecting timed out (connect timeout, or the call's deadline) |
//! | TRANSIENT | `0x43420211` | [`TRANSIENT_POOL_POISONED`](minor::TRANSIENT_POOL_POISONED) | NO | the connection pool is unusable (a thread panicked holding it) |
//! | TRANSIENT | `0x43424e01` | [`TRANSIENT_FORWARD_LIMIT`](minor::TRANSIENT_FORWARD_LIMIT) | NO | LOCATION_FORWARD hop limit reached (a chain that ends this way is not unwound) |
//! | TRANSIENT | `0x43424e02` | [`TRANSIENT_RESEND_LIMIT`](minor::TRANSIENT_RESEND_LIMIT) | NO | the server closed the connection before reading the request on every resend |
//! | TRANSIENT | `0x43420213` | [`TRANSIENT_NAMING_STORE_UNAVAILABLE`](minor::TRANSIENT_NAMING_STORE_UNAVAILABLE) | NO | naming: the store (etcd) is unreachable or without quorum: the write is refused (or timed out) |
//! | COMM_FAILURE | `0x43420201` | [`COMM_FAILURE_SEND`](minor::COMM_FAILURE_SEND) | NO | sending the request failed |
//! | COMM_FAILURE | `0x43420202` | [`COMM_FAILURE_RECEIVE`](minor::COMM_FAILURE_RECEIVE) | MAYBE | receiving the reply failed (OS error) |
//! | COMM_FAILURE | `0x43420203` | [`COMM_FAILURE_CLOSED`](minor::COMM_FAILURE_CLOSED) | MAYBE | the server closed the connection before replying |
//! | COMM_FAILURE | `0x43420204` | [`COMM_FAILURE_PROTOCOL`](minor::COMM_FAILURE_PROTOCOL) | MAYBE | the server sent invalid or unexpected GIOP |
//! | COMM_FAILURE | `0x43420205` | [`COMM_FAILURE_MESSAGE_ERROR`](minor::COMM_FAILURE_MESSAGE_ERROR) | NO | the server answered MessageError |
//! | COMM_FAILURE | `0x43420206` | [`COMM_FAILURE_BATCH_SEND`](minor::COMM_FAILURE_BATCH_SEND) | MAYBE | writing buffered oneways (this one among them) failed |
//! | COMM_FAILURE | `0x43420207` | [`COMM_FAILURE_SEND_REPLY`](minor::COMM_FAILURE_SEND_REPLY) | YES | server: sending the reply failed |
//! | COMM_FAILURE | `0x43424e03` | [`COMM_FAILURE_ONEWAYS_LOST`](minor::COMM_FAILURE_ONEWAYS_LOST) | NO (a call), MAYBE (a flush) | buffered oneways were lost by an earlier write outside any call |
//! | TIMEOUT | `0x4f4d0001` | [`TIMEOUT_NOT_READY`](minor::TIMEOUT_NOT_READY) | MAYBE | OMG 1: an AMI poller's reply is not available within the timeout |
//! | TIMEOUT | `0x43420220` | [`TIMEOUT_SEND`](minor::TIMEOUT_SEND) | NO | sending the request timed out |
//! | TIMEOUT | `0x43420221` | [`TIMEOUT_RECEIVE`](minor::TIMEOUT_RECEIVE) | MAYBE | receiving the reply timed out |
//! | TIMEOUT | `0x43420222` | [`TIMEOUT_WAIT`](minor::TIMEOUT_WAIT) | NO | waiting for a free connection (an asynchronous call: for a connect under way) timed out |
//! | INV_OBJREF | `0x43420230` | [`INV_OBJREF_NO_IIOP_PROFILE`](minor::INV_OBJREF_NO_IIOP_PROFILE) | NO | the reference has no usable IIOP profile |
//! | INV_OBJREF | `0x43420231` | [`INV_OBJREF_GIOP_VERSION`](minor::INV_OBJREF_GIOP_VERSION) | NO | the profile's GIOP version is not supported |
//! | INV_OBJREF | `0x43420232` | [`INV_OBJREF_NIL`](minor::INV_OBJREF_NIL) | NO | an operation invoked on a nil abstract interface (generated code) |
//! | MARSHAL | `0x43420240` | [`MARSHAL_REQUEST`](minor::MARSHAL_REQUEST) | NO | the request could not be encoded (GIOP header, closed connection) |
//! | MARSHAL | `0x43420241` | [`MARSHAL_ADDRESSING_MODE`](minor::MARSHAL_ADDRESSING_MODE) | NO | a NEEDS_ADDRESSING_MODE reply named an undefined mode |
//! | MARSHAL | `0x43420242` | [`MARSHAL_NAMING_REFERENCE`](minor::MARSHAL_NAMING_REFERENCE) | NO | naming: a reference to bind could not be encapsulated |
//! | OBJECT_NOT_EXIST | `0x4f4d0002` | [`OBJECT_NOT_EXIST_NO_ADAPTER`](minor::OBJECT_NOT_EXIST_NO_ADAPTER) | NO | OMG 2: the key names no POA of ours (malformed, stale, destroyed) |
//! | OBJECT_NOT_EXIST | `0x4f4d0005` | [`OBJECT_NOT_EXIST_POLLER_TAKEN`](minor::OBJECT_NOT_EXIST_POLLER_TAKEN) | NO | OMG 5: an AMI poller already delivered its reply |
//! | OBJECT_NOT_EXIST | `0x43420250` | [`OBJECT_NOT_EXIST_NO_KEY`](minor::OBJECT_NOT_EXIST_NO_KEY) | NO | server: the request's target address names no object key |
//! | OBJECT_NOT_EXIST | `0x43420251` | [`OBJECT_NOT_EXIST_NAME_NOT_FOUND`](minor::OBJECT_NOT_EXIST_NAME_NOT_FOUND) | NO | `corbaname:`: no object is bound to the name (`NotFound`) |
//! | OBJECT_NOT_EXIST | `0x43420252` | [`OBJECT_NOT_EXIST_NO_OBJECT`](minor::OBJECT_NOT_EXIST_NO_OBJECT) | NO | the POA exists but no object is active under the id |
//! | OBJECT_NOT_EXIST | `0x43420253` | [`OBJECT_NOT_EXIST_VALUE_GONE`](minor::OBJECT_NOT_EXIST_VALUE_GONE) | NO | a shared value served as an object was dropped (generated `ValueRef` servants) |
//! | OBJECT_NOT_EXIST | `0x43420254` | [`OBJECT_NOT_EXIST_NAMING_CONTEXT`](minor::OBJECT_NOT_EXIST_NAMING_CONTEXT) | NO | naming: the context was destroyed, or the object id names none |
//! | OBJECT_NOT_EXIST | `0x43420255` | [`OBJECT_NOT_EXIST_NAMING_SERVICE`](minor::OBJECT_NOT_EXIST_NAMING_SERVICE) | NO | naming: the naming service behind the context is gone |
//! | OBJECT_NOT_EXIST | `0x43420258` | [`OBJECT_NOT_EXIST_EVENT_OBJECT`](minor::OBJECT_NOT_EXIST_EVENT_OBJECT) | NO | events: the channel was destroyed, or the proxy disconnected |
//! | OBJ_ADAPTER | `0x4f4d0001` | [`OBJ_ADAPTER_INACTIVE`](minor::OBJ_ADAPTER_INACTIVE) | NO | OMG 1: the POA manager is inactive |
//! | OBJ_ADAPTER | `0x4f4d0003` | [`OBJ_ADAPTER_NO_DEFAULT_SERVANT`](minor::OBJ_ADAPTER_NO_DEFAULT_SERVANT) | NO | OMG 3: USE_DEFAULT_SERVANT without a default servant |
//! | OBJ_ADAPTER | `0x4f4d0004` | [`OBJ_ADAPTER_NO_SERVANT_MANAGER`](minor::OBJ_ADAPTER_NO_SERVANT_MANAGER) | NO | OMG 4: USE_SERVANT_MANAGER without (the right kind of) servant manager |
//! | OBJ_ADAPTER | `0x4f4d0005` | [`OBJ_ADAPTER_INCARNATE_POLICY`](minor::OBJ_ADAPTER_INCARNATE_POLICY) | NO | OMG 5: `incarnate` returned a servant already active (UNIQUE_ID) |
//! | INTERNAL | `0x43420260` | [`INTERNAL_NO_REPLY`](minor::INTERNAL_NO_REPLY) | MAYBE | the servant returned without replying |
//! | INTERNAL | `0x43420261` | [`INTERNAL_DEFERRED_LOST`](minor::INTERNAL_DEFERRED_LOST) | MAYBE | a deferred (DII) request ended without an outcome |
//! | INTERNAL | `0x43420262` | [`INTERNAL_INCARNATION_LOST`](minor::INTERNAL_INCARNATION_LOST) | NO | a servant incarnated for the call was deactivated before it ran |
//! | INTERNAL | `0x43420263` | [`INTERNAL_REPLY_HANDLE_DROPPED`](minor::INTERNAL_REPLY_HANDLE_DROPPED) | MAYBE | a deferred reply's handle (an AMH response handler) was dropped without a reply |
//! | INTERNAL | `0x43420264` | [`INTERNAL_NAMING`](minor::INTERNAL_NAMING) | NO | naming: a request without the object id of a context or iterator, or an iterator that could not be activated |
//! | INTERNAL | `0x43420268` | [`INTERNAL_EVENTS`](minor::INTERNAL_EVENTS) | NO | events: a channel's or proxy's servant could not be activated |
//! | BAD_INV_ORDER | `0x4f4d0004` | [`BAD_INV_ORDER_ORB_SHUTDOWN`](minor::BAD_INV_ORDER_ORB_SHUTDOWN) | NO | OMG 4: the ORB has been destroyed |
//! | BAD_INV_ORDER | `0x4f4d0007` | [`BAD_INV_ORDER_ARGUMENTS_ORDER`](minor::BAD_INV_ORDER_ARGUMENTS_ORDER) | NO | OMG 7: DSI: `arguments` called twice or after the result |
//! | BAD_INV_ORDER | `0x4f4d0009` | [`BAD_INV_ORDER_REPLIED`](minor::BAD_INV_ORDER_REPLIED) | YES | OMG 9: the servant replied twice (`set_result` more than once) |
//! | BAD_INV_ORDER | `0x4f4d000b` | [`BAD_INV_ORDER_NOT_SENT`](minor::BAD_INV_ORDER_NOT_SENT) | NO | OMG 11: DII: a result asked of a request not sent yet |
//! | BAD_INV_ORDER | `0x4f4d000e` | [`BAD_INV_ORDER_INTERCEPTOR_CALL`](minor::BAD_INV_ORDER_INTERCEPTOR_CALL) | NO | OMG 14: interceptors: an attribute read where it is not available |
//! | BAD_INV_ORDER | `0x4f4d000f` | [`BAD_INV_ORDER_DUPLICATE_CONTEXT`](minor::BAD_INV_ORDER_DUPLICATE_CONTEXT) | NO | OMG 15: interceptors: a service context added twice without `replace` |
//! | NO_IMPLEMENT | `0x43420270` | [`NO_IMPLEMENT_INTERFACE_REPOSITORY`](minor::NO_IMPLEMENT_INTERFACE_REPOSITORY) | NO | `_interface`: there is no interface repository |
//! | NO_IMPLEMENT | `0x43420271` | [`NO_IMPLEMENT_OPERATION`](minor::NO_IMPLEMENT_OPERATION) | NO | the servant does not implement the operation (a default method generated with `Builder::no_implement_defaults`) |
//! | NO_IMPLEMENT | `0x43420272` | [`NO_IMPLEMENT_DEFERRED_REPLY`](minor::NO_IMPLEMENT_DEFERRED_REPLY) | NO | the request cannot be answered after its upcall (`defer_reply` through a `ServantInvoker`) |
//! | BAD_OPERATION | `0x4f4d0002` | [`BAD_OPERATION_UNKNOWN`](minor::BAD_OPERATION_UNKNOWN) | NO | OMG 2: the operation or attribute is not known to the target object |
//! | BAD_OPERATION | `0x434202b0` | [`BAD_OPERATION_WRONG_POLLER_OPERATION`](minor::BAD_OPERATION_WRONG_POLLER_OPERATION) | NO | AMI: a poller was polled for another operation than its request's |
//! | BAD_OPERATION | `0x434202b1` | [`BAD_OPERATION_WRONG_RESPONSE`](minor::BAD_OPERATION_WRONG_RESPONSE) | MAYBE | AMH: a response handler answered with another operation's results |
//! | BAD_TYPECODE | `0x4f4d0001` | [`BAD_TYPECODE_INCOMPLETE`](minor::BAD_TYPECODE_INCOMPLETE) | NO | OMG 1: the TypeCode is incomplete (a recursive placeholder never resolved) |
//! | BAD_TYPECODE | `0x4f4d0002` | [`BAD_TYPECODE_ILLEGAL_MEMBER`](minor::BAD_TYPECODE_ILLEGAL_MEMBER) | NO | OMG 2: a TypeCode member's type is illegal (void, an exception; typecode factory) |
//! | NO_RESOURCES | `0x4f4d0001` | [`NO_RESOURCES_PI_UNAVAILABLE`](minor::NO_RESOURCES_PI_UNAVAILABLE) | NO | OMG 1: interceptors: the request was made or served without the TypeCodes asked for |
//! | NO_RESOURCES | `0x43420280` | [`NO_RESOURCES_THREAD`](minor::NO_RESOURCES_THREAD) | NO | a thread (a deferred request's, a bidirectional connection's reader) could not be started |
//! | INITIALIZE | `0x43420290` | [`INITIALIZE_LISTEN`](minor::INITIALIZE_LISTEN) | NO | the ORB's server could not listen on its endpoints |
//! | INITIALIZE | `0x43420291` | [`INITIALIZE_NO_ENDPOINT`](minor::INITIALIZE_NO_ENDPOINT) | NO | the ORB has no endpoint to publish in references |
//! | PERSIST_STORE | `0x434202c0` | [`PERSIST_STORE_FAILED`](minor::PERSIST_STORE_FAILED) | NO | naming: the persistent store could not be read or written |
//! | PERSIST_STORE | `0x434202c1` | [`PERSIST_STORE_BAD_REFERENCE`](minor::PERSIST_STORE_BAD_REFERENCE) | NO | naming: a stored reference is not a valid IOR |
//! | PERSIST_STORE | `0x434202c8` | [`PERSIST_STORE_EVENTS`](minor::PERSIST_STORE_EVENTS) | NO | events: the persistent store could not be read or written |
//! | NO_PERMISSION | `0x434202d0` | [`NO_PERMISSION_DESTROY_ROOT`](minor::NO_PERMISSION_DESTROY_ROOT) | NO | naming: the root context cannot be destroyed |
//! | IMP_LIMIT | `0x434202e8` | [`IMP_LIMIT_EVENT_PROXIES`](minor::IMP_LIMIT_EVENT_PROXIES) | NO | events: the channel has as many proxies as its `MaxNumProxies` allows |
//! | MARSHAL, BAD_PARAM, IMP_LIMIT, … | the CDR or GIOP error's ([`MarshalError::minor`]) | | NO (arguments, a forward), YES (a reply) | marshalling failed |
//!
//! CDR and GIOP decoding errors keep their own codes ([`MarshalError::minor`], `0x434200..`).

use std::fmt;
use std::io;

use crate::cdr::MarshalError;
use crate::giop::connection::ConnectionError;
use crate::giop::GiopError;
use crate::transport::Address;
use crate::{CompletionStatus, SystemException, SystemExceptionKind};

/// Every minor code Corbina raises, defined once: the runtime's raise sites, `corbina-naming`
/// and generated code use these constants (the POA's [`crate::poa::minor`] and
/// [`crate::orb::corbaname_minor`] re-export some of them under their older names).
/// [`minor::TABLE`] lists them with their exception and meaning, as the module docs do.
pub mod minor {
    use crate::cdr::{CORBINA_VMCID, OMG_VMCID};
    use crate::SystemExceptionKind;

    /// One minor code: its constant's name, value, the exception it is raised with, and
    /// what it means.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct MinorCode {
        /// The constant's name (`TRANSIENT_CONNECT_FAILED`).
        pub name: &'static str,
        /// The minor code.
        pub code: u32,
        /// The exception raised with it.
        pub kind: SystemExceptionKind,
        /// What it means.
        pub meaning: &'static str,
    }

    macro_rules! minor_codes {
        ($($name:ident = $kind:ident, $code:expr, $meaning:literal;)*) => {
            $(
                #[doc = concat!(stringify!($kind), ": ", $meaning, ".")]
                pub const $name: u32 = $code;
            )*
            /// Every code above, in declaration order.
            pub const TABLE: &[MinorCode] = &[$(MinorCode {
                name: stringify!($name),
                code: $code,
                kind: SystemExceptionKind::$kind,
                meaning: $meaning,
            },)*];
        };
    }

    minor_codes! {
        UNKNOWN_USER_EXCEPTION = Unknown, OMG_VMCID | 1, "OMG 1: the server raised a user exception the operation's `raises` clause does not list";
        BAD_PARAM_INCOMPLETE_TYPECODE = BadParam, OMG_VMCID | 13, "OMG 13: a TypeCode operation needs a complete TypeCode (typecode factory)";
        BAD_PARAM_BAD_NAME = BadParam, OMG_VMCID | 15, "OMG 15: a TypeCode's name is not a valid IDL identifier (typecode factory)";
        BAD_PARAM_BAD_REPOSITORY_ID = BadParam, OMG_VMCID | 16, "OMG 16: a TypeCode's repository id is malformed (typecode factory)";
        BAD_PARAM_BAD_MEMBER_NAME = BadParam, OMG_VMCID | 17, "OMG 17: a TypeCode member name is invalid or repeated (typecode factory)";
        BAD_PARAM_DUPLICATE_LABEL = BadParam, OMG_VMCID | 18, "OMG 18: a union TypeCode repeats a label (typecode factory)";
        BAD_PARAM_INCOMPATIBLE_LABEL = BadParam, OMG_VMCID | 19, "OMG 19: a union label's type is not the discriminator's (typecode factory)";
        BAD_PARAM_BAD_DISCRIMINATOR = BadParam, OMG_VMCID | 20, "OMG 20: a union discriminator type is not legitimate (typecode factory)";
        BAD_PARAM_NOT_AN_EXCEPTION = BadParam, OMG_VMCID | 21, "OMG 21: DSI `set_exception` with an `Any` that is not an exception";
        BAD_PARAM_NO_SERVICE_CONTEXT = BadParam, OMG_VMCID | 26, "OMG 26: interceptors: no service context with that id";
        BAD_PARAM_BAD_SCHEME_NAME = BadParam, OMG_VMCID | 7, "OMG 7: `string_to_object`: not an IOR or object URL";
        BAD_PARAM_BAD_ADDRESS = BadParam, OMG_VMCID | 8, "OMG 8: `string_to_object`: a `corbaloc:rir:` name that is not an initial reference";
        BAD_PARAM_BAD_SCHEME_SPECIFIC_PART = BadParam, OMG_VMCID | 9, "OMG 9: a URL's address cannot be encoded; `corbaname:` name invalid (`InvalidName`)";
        BAD_PARAM_BAD_URI_OTHER = BadParam, OMG_VMCID | 10, "OMG 10: `corbaname:`: the naming service could not proceed (`CannotProceed`), or the corbaloc part is no naming context";
        BAD_PARAM_NOT_OF_TYPE = BadParam, CORBINA_VMCID | 0x2a0, "narrow: the object does not implement the interface";
        BAD_PARAM_DII_ARGUMENT = BadParam, CORBINA_VMCID | 0x2a1, "DII: no such argument, an `in` argument without a value, or a value of another TypeCode";
        BAD_PARAM_NIL_CONTEXT = BadParam, CORBINA_VMCID | 0x2a2, "naming: `bind_context`/`rebind_context` given a nil context";
        BAD_PARAM_ZERO_HOW_MANY = BadParam, CORBINA_VMCID | 0x2a3, "naming: `BindingIterator::next_n(0)`";
        BAD_PARAM_TYPECODE_ARGUMENT = BadParam, CORBINA_VMCID | 0x2a4, "typecode factory: an argument the standard has no minor code for (an enum without enumerators, an array of length 0, a bad value modifier, visibility or concrete base, a box of a value type)";
        BAD_PARAM_NIL_EVENT_PEER = BadParam, CORBINA_VMCID | 0x2a8, "events: `connect_push_consumer`/`connect_pull_supplier` given a nil reference";
        TRANSIENT_DISCARDING = Transient, OMG_VMCID | 1, "OMG 1: the POA manager discards requests (discarding, or held past the maximum wait)";
        TRANSIENT_CONNECT_FAILED = Transient, CORBINA_VMCID | 0x212, "connecting to the profile's endpoint failed (refused, unreachable, name not resolved; omniORB's TRANSIENT_ConnectFailed)";
        TRANSIENT_CONNECT_TIMEOUT = Transient, CORBINA_VMCID | 0x210, "connecting timed out (connect timeout, or the call's deadline)";
        TRANSIENT_POOL_POISONED = Transient, CORBINA_VMCID | 0x211, "the connection pool is unusable (a thread panicked holding it)";
        TRANSIENT_FORWARD_LIMIT = Transient, 0x4342_4e01, "LOCATION_FORWARD hop limit reached (a chain that ends this way is not unwound)";
        TRANSIENT_RESEND_LIMIT = Transient, 0x4342_4e02, "the server closed the connection before reading the request on every resend";
        TRANSIENT_NAMING_STORE_UNAVAILABLE = Transient, CORBINA_VMCID | 0x213, "naming: the store (etcd) is unreachable or without quorum: the write is refused (or timed out)";
        COMM_FAILURE_SEND = CommFailure, CORBINA_VMCID | 0x201, "sending the request failed";
        COMM_FAILURE_RECEIVE = CommFailure, CORBINA_VMCID | 0x202, "receiving the reply failed (OS error)";
        COMM_FAILURE_CLOSED = CommFailure, CORBINA_VMCID | 0x203, "the server closed the connection before replying";
        COMM_FAILURE_PROTOCOL = CommFailure, CORBINA_VMCID | 0x204, "the server sent invalid or unexpected GIOP";
        COMM_FAILURE_MESSAGE_ERROR = CommFailure, CORBINA_VMCID | 0x205, "the server answered MessageError";
        COMM_FAILURE_BATCH_SEND = CommFailure, CORBINA_VMCID | 0x206, "writing buffered oneways (this one among them) failed";
        COMM_FAILURE_SEND_REPLY = CommFailure, CORBINA_VMCID | 0x207, "server: sending the reply failed";
        COMM_FAILURE_ONEWAYS_LOST = CommFailure, 0x4342_4e03, "buffered oneways were lost by an earlier write outside any call";
        TIMEOUT_NOT_READY = Timeout, OMG_VMCID | 1, "OMG 1: an AMI poller's reply is not available within the timeout";
        TIMEOUT_SEND = Timeout, CORBINA_VMCID | 0x220, "sending the request timed out";
        TIMEOUT_RECEIVE = Timeout, CORBINA_VMCID | 0x221, "receiving the reply timed out";
        TIMEOUT_WAIT = Timeout, CORBINA_VMCID | 0x222, "waiting for a free connection (an asynchronous call: for a connect under way) timed out";
        INV_OBJREF_NO_IIOP_PROFILE = InvObjref, CORBINA_VMCID | 0x230, "the reference has no usable IIOP profile";
        INV_OBJREF_GIOP_VERSION = InvObjref, CORBINA_VMCID | 0x231, "the profile's GIOP version is not supported";
        INV_OBJREF_NIL = InvObjref, CORBINA_VMCID | 0x232, "an operation invoked on a nil abstract interface (generated code)";
        MARSHAL_REQUEST = Marshal, CORBINA_VMCID | 0x240, "the request could not be encoded (GIOP header, closed connection)";
        MARSHAL_ADDRESSING_MODE = Marshal, CORBINA_VMCID | 0x241, "a NEEDS_ADDRESSING_MODE reply named an undefined mode";
        MARSHAL_NAMING_REFERENCE = Marshal, CORBINA_VMCID | 0x242, "naming: a reference to bind could not be encapsulated";
        OBJECT_NOT_EXIST_NO_ADAPTER = ObjectNotExist, OMG_VMCID | 2, "OMG 2: the key names no POA of ours (malformed, stale, destroyed)";
        OBJECT_NOT_EXIST_POLLER_TAKEN = ObjectNotExist, OMG_VMCID | 5, "OMG 5: an AMI poller already delivered its reply";
        OBJECT_NOT_EXIST_NO_KEY = ObjectNotExist, CORBINA_VMCID | 0x250, "server: the request's target address names no object key";
        OBJECT_NOT_EXIST_NAME_NOT_FOUND = ObjectNotExist, CORBINA_VMCID | 0x251, "`corbaname:`: no object is bound to the name (`NotFound`)";
        OBJECT_NOT_EXIST_NO_OBJECT = ObjectNotExist, CORBINA_VMCID | 0x252, "the POA exists but no object is active under the id";
        OBJECT_NOT_EXIST_VALUE_GONE = ObjectNotExist, CORBINA_VMCID | 0x253, "a shared value served as an object was dropped (generated `ValueRef` servants)";
        OBJECT_NOT_EXIST_NAMING_CONTEXT = ObjectNotExist, CORBINA_VMCID | 0x254, "naming: the context was destroyed, or the object id names none";
        OBJECT_NOT_EXIST_NAMING_SERVICE = ObjectNotExist, CORBINA_VMCID | 0x255, "naming: the naming service behind the context is gone";
        OBJECT_NOT_EXIST_EVENT_OBJECT = ObjectNotExist, CORBINA_VMCID | 0x258, "events: the channel was destroyed, or the proxy disconnected";
        OBJ_ADAPTER_INACTIVE = ObjAdapter, OMG_VMCID | 1, "OMG 1: the POA manager is inactive";
        OBJ_ADAPTER_NO_DEFAULT_SERVANT = ObjAdapter, OMG_VMCID | 3, "OMG 3: USE_DEFAULT_SERVANT without a default servant";
        OBJ_ADAPTER_NO_SERVANT_MANAGER = ObjAdapter, OMG_VMCID | 4, "OMG 4: USE_SERVANT_MANAGER without (the right kind of) servant manager";
        OBJ_ADAPTER_INCARNATE_POLICY = ObjAdapter, OMG_VMCID | 5, "OMG 5: `incarnate` returned a servant already active (UNIQUE_ID)";
        INTERNAL_NO_REPLY = Internal, CORBINA_VMCID | 0x260, "the servant returned without replying";
        INTERNAL_DEFERRED_LOST = Internal, CORBINA_VMCID | 0x261, "a deferred (DII) request ended without an outcome";
        INTERNAL_INCARNATION_LOST = Internal, CORBINA_VMCID | 0x262, "a servant incarnated for the call was deactivated before it ran";
        INTERNAL_REPLY_HANDLE_DROPPED = Internal, CORBINA_VMCID | 0x263, "a deferred reply's handle (an AMH response handler) was dropped without a reply";
        INTERNAL_NAMING = Internal, CORBINA_VMCID | 0x264, "naming: a request without the object id of a context or iterator, or an iterator that could not be activated";
        INTERNAL_EVENTS = Internal, CORBINA_VMCID | 0x268, "events: a channel's or proxy's servant could not be activated";
        BAD_INV_ORDER_ORB_SHUTDOWN = BadInvOrder, OMG_VMCID | 4, "OMG 4: the ORB has been destroyed";
        BAD_INV_ORDER_ARGUMENTS_ORDER = BadInvOrder, OMG_VMCID | 7, "OMG 7: DSI: `arguments` called twice or after the result";
        BAD_INV_ORDER_REPLIED = BadInvOrder, OMG_VMCID | 9, "OMG 9: the servant replied twice (`set_result` more than once)";
        BAD_INV_ORDER_NOT_SENT = BadInvOrder, OMG_VMCID | 11, "OMG 11: DII: a result asked of a request not sent yet";
        BAD_INV_ORDER_INTERCEPTOR_CALL = BadInvOrder, OMG_VMCID | 14, "OMG 14: interceptors: an attribute read where it is not available";
        BAD_INV_ORDER_DUPLICATE_CONTEXT = BadInvOrder, OMG_VMCID | 15, "OMG 15: interceptors: a service context added twice without `replace`";
        NO_IMPLEMENT_INTERFACE_REPOSITORY = NoImplement, CORBINA_VMCID | 0x270, "`_interface`: there is no interface repository";
        NO_IMPLEMENT_OPERATION = NoImplement, CORBINA_VMCID | 0x271, "the servant does not implement the operation (a default method generated with `Builder::no_implement_defaults`)";
        NO_IMPLEMENT_DEFERRED_REPLY = NoImplement, CORBINA_VMCID | 0x272, "the request cannot be answered after its upcall (`defer_reply` through a `ServantInvoker`)";
        BAD_OPERATION_UNKNOWN = BadOperation, OMG_VMCID | 2, "OMG 2: the operation or attribute is not known to the target object";
        BAD_OPERATION_WRONG_POLLER_OPERATION = BadOperation, CORBINA_VMCID | 0x2b0, "AMI: a poller was polled for another operation than its request's";
        BAD_OPERATION_WRONG_RESPONSE = BadOperation, CORBINA_VMCID | 0x2b1, "AMH: a response handler answered with another operation's results";
        BAD_TYPECODE_INCOMPLETE = BadTypecode, OMG_VMCID | 1, "OMG 1: the TypeCode is incomplete (a recursive placeholder never resolved)";
        BAD_TYPECODE_ILLEGAL_MEMBER = BadTypecode, OMG_VMCID | 2, "OMG 2: a TypeCode member's type is illegal (void, an exception; typecode factory)";
        NO_RESOURCES_PI_UNAVAILABLE = NoResources, OMG_VMCID | 1, "OMG 1: interceptors: the request was made or served without the TypeCodes asked for";
        NO_RESOURCES_THREAD = NoResources, CORBINA_VMCID | 0x280, "a thread (a deferred request's, a bidirectional connection's reader) could not be started";
        INITIALIZE_LISTEN = Initialize, CORBINA_VMCID | 0x290, "the ORB's server could not listen on its endpoints";
        INITIALIZE_NO_ENDPOINT = Initialize, CORBINA_VMCID | 0x291, "the ORB has no endpoint to publish in references";
        PERSIST_STORE_FAILED = PersistStore, CORBINA_VMCID | 0x2c0, "naming: the persistent store could not be read or written";
        PERSIST_STORE_BAD_REFERENCE = PersistStore, CORBINA_VMCID | 0x2c1, "naming: a stored reference is not a valid IOR";
        PERSIST_STORE_EVENTS = PersistStore, CORBINA_VMCID | 0x2c8, "events: the persistent store could not be read or written";
        NO_PERMISSION_DESTROY_ROOT = NoPermission, CORBINA_VMCID | 0x2d0, "naming: the root context cannot be destroyed";
        IMP_LIMIT_EVENT_PROXIES = ImpLimit, CORBINA_VMCID | 0x2e8, "events: the channel has as many proxies as its `MaxNumProxies` allows";
    }

    /// The entry of `code` raised with `kind`, if it is one of Corbina's.
    pub fn lookup(kind: SystemExceptionKind, code: u32) -> Option<&'static MinorCode> {
        TABLE.iter().find(|m| m.kind == kind && m.code == code)
    }
}

/// The phase of a call that failed or timed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Opening a connection.
    Connect,
    /// Waiting for a connection of the pool to come free.
    Wait,
    /// Writing the request.
    Send,
    /// Reading the reply.
    Receive,
}

/// How an endpoint is shown: the transport, then its address (`tcp 127.0.0.1:5002`).
struct Endpoint<'a>(&'a Address);

impl fmt::Display for Endpoint<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Address::Tcp { .. } => write!(f, "tcp {}", self.0),
            Address::Ssl { host, port } if host.contains(':') => write!(f, "ssl [{host}]:{port}"),
            Address::Ssl { host, port } => write!(f, "ssl {host}:{port}"),
            Address::Unix(p) => write!(f, "unix {}", p.display()),
            Address::Shm(p) => write!(f, "shm {}", p.display()),
        }
    }
}

fn timed_out(phase: Phase, endpoint: &Address) -> String {
    let ep = Endpoint(endpoint);
    match phase {
        Phase::Connect => format!("connect to {ep} timed out"),
        Phase::Wait => format!("wait for a free connection to {ep} timed out"),
        Phase::Send => format!("send to {ep} timed out"),
        Phase::Receive => format!("receive from {ep} timed out"),
    }
}

/// What failed on the call path. Becomes the [`SystemException`] a call returns through
/// [`Error::to_system_exception`] (or `From`), which keeps it as the exception's detail.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Opening a connection failed.
    #[error("connect to {} failed: {source}", Endpoint(endpoint))]
    Connect {
        /// Where.
        endpoint: Address,
        /// The OS error.
        source: io::Error,
    },
    /// A phase of the call ran past its deadline (connect: past the connect timeout too).
    #[error("{}", timed_out(*phase, endpoint))]
    Timeout {
        /// Where.
        endpoint: Address,
        /// Which phase.
        phase: Phase,
    },
    /// Writing the request failed: it did not reach the server.
    #[error("send to {} failed: {source}", Endpoint(endpoint))]
    Send {
        /// Where.
        endpoint: Address,
        /// The OS error.
        source: io::Error,
    },
    /// Reading the reply failed: the request may have run.
    #[error("receive from {} failed: {source}", Endpoint(endpoint))]
    Receive {
        /// Where.
        endpoint: Address,
        /// The OS error.
        source: io::Error,
    },
    /// The server closed the connection before its reply came.
    #[error(
        "receive from {} failed: the server closed the connection",
        Endpoint(endpoint)
    )]
    ConnectionClosed {
        /// Where.
        endpoint: Address,
    },
    /// The server's bytes are not valid GIOP for this connection.
    #[error("receive from {} failed: {source}", Endpoint(endpoint))]
    Protocol {
        /// Where.
        endpoint: Address,
        /// What was wrong.
        source: ConnectionError,
    },
    /// The server sent a message a client does not expect in reply to its request.
    #[error(
        "receive from {} failed: the server sent {message}",
        Endpoint(endpoint)
    )]
    UnexpectedMessage {
        /// Where.
        endpoint: Address,
        /// What it sent.
        message: &'static str,
    },
    /// The server answered MessageError: it could not read the request.
    #[error("the server at {} answered MessageError", Endpoint(endpoint))]
    MessageError {
        /// Where.
        endpoint: Address,
    },
    /// Writing buffered oneways, this call's among them, failed: they are lost.
    #[error(
        "send of {count} buffered oneway(s) to {} failed: {source}",
        Endpoint(endpoint)
    )]
    BatchSend {
        /// Where.
        endpoint: Address,
        /// How many oneways were lost.
        count: usize,
        /// The OS error.
        source: io::Error,
    },
    /// Buffered oneways were lost earlier, written outside any call; this call reports them
    /// (it was not sent).
    #[error(
        "{count} buffered oneway(s) to {} were lost when their connection failed",
        Endpoint(endpoint)
    )]
    OnewaysLost {
        /// Where.
        endpoint: Address,
        /// How many.
        count: u64,
    },
    /// An explicit flush found buffered oneways lost.
    #[error("{count} buffered oneway(s) were lost when their connection failed")]
    FlushLost {
        /// How many.
        count: u64,
    },
    /// LOCATION_FORWARD replies led further than the hop limit.
    #[error("more than {limit} LOCATION_FORWARD hops")]
    ForwardLimit {
        /// The limit.
        limit: u32,
    },
    /// The server closed the connection before reading the request on every resend.
    #[error(
        "the server at {} closed the connection before reading the request, {resends} times",
        Endpoint(endpoint)
    )]
    ResendLimit {
        /// Where.
        endpoint: Address,
        /// How many times the request was sent.
        resends: usize,
    },
    /// A thread panicked while holding the connection pool's state.
    #[error(
        "the connection pool for {} is unusable (a thread panicked holding it)",
        Endpoint(endpoint)
    )]
    PoolPoisoned {
        /// Where.
        endpoint: Address,
    },
    /// The reference has no IIOP profile this ORB can use.
    #[error("the reference has no usable IIOP profile")]
    NoUsableProfile,
    /// The profile's GIOP version cannot be spoken.
    #[error("GIOP 1.{minor} is not supported")]
    GiopVersion {
        /// The minor version.
        minor: u8,
    },
    /// The request could not be started or finished: its header does not encode (the
    /// operation name, the target), it is too large, or the connection is closed. Nothing
    /// was sent.
    #[error("the request could not be encoded: {0}")]
    EncodeRequest(#[source] ConnectionError),
    /// The arguments could not be marshalled: nothing was sent.
    #[error("the arguments could not be marshalled: {0}")]
    MarshalArguments(#[source] MarshalError),
    /// A reply (result, exception) could not be decoded: the operation ran.
    #[error("the reply could not be decoded: {0}")]
    DecodeReply(#[source] GiopError),
    /// The reference in a LOCATION_FORWARD reply could not be decoded.
    #[error("the forward reference could not be decoded: {0}")]
    DecodeForward(#[source] GiopError),
    /// A NEEDS_ADDRESSING_MODE reply named no mode GIOP defines.
    #[error("the server asked for an undefined addressing mode")]
    AddressingMode,
    /// Server side: the request's target address resolves to no object key.
    #[error("the request's target address names no object key")]
    NoObjectKey,
    /// Server side: the servant returned without replying to a call that expects a reply.
    #[error("the servant returned without replying")]
    NoReply,
    /// Server side: the servant deferred its reply and dropped the handle without replying.
    #[error("the servant dropped its reply handle without replying")]
    ReplyHandleDropped,
    /// Server side: the servant replied twice.
    #[error("the servant replied twice")]
    RepliedTwice,
    /// Server side: the reply could not be encoded.
    #[error("the reply could not be encoded: {0}")]
    EncodeReply(#[source] GiopError),
    /// Server side: writing the reply failed.
    #[error("sending the reply failed: {source}")]
    SendReply {
        /// The OS error.
        source: io::Error,
    },
    /// Server side: a servant incarnated for this call was deactivated before it ran.
    #[error("the servant incarnated for the call was deactivated before it ran")]
    IncarnationLost,
    /// A narrow: the object does not implement the interface.
    #[error("the object is not a {repository_id}")]
    NotOfType {
        /// The interface's repository id.
        repository_id: &'static str,
    },
    /// `_interface`: there is no interface repository.
    #[error("there is no interface repository")]
    NoInterfaceRepository,
    /// A deferred request's thread could not be started.
    #[error("a thread for a deferred request could not be started: {source}")]
    ThreadSpawn {
        /// The OS error.
        source: io::Error,
    },
    /// A deferred request's thread ended without an outcome.
    #[error("a deferred request ended without an outcome")]
    DeferredLost,
    /// The reader thread of a bidirectional GIOP connection could not be started.
    #[error(
        "the reader thread of a bidirectional connection to {} could not be started: {source}",
        Endpoint(endpoint)
    )]
    BidirReader {
        /// Where the connection goes.
        endpoint: Address,
        /// The OS error.
        source: io::Error,
    },
    /// The reader (or connecting) thread of an asynchronous calls' connection could not be
    /// started.
    #[error(
        "a thread for the asynchronous connection to {} could not be started: {source}",
        Endpoint(endpoint)
    )]
    AsyncThread {
        /// Where the connection goes.
        endpoint: Address,
        /// The OS error.
        source: io::Error,
    },
    /// The ORB's server could not listen on its endpoints.
    #[error("the ORB could not listen on its endpoints: {source}")]
    Listen {
        /// The OS error.
        source: io::Error,
    },
    /// The ORB has no endpoint (TCP or local) to publish in its references.
    #[error("the ORB has no endpoint to publish")]
    NoEndpoint,
}

impl Error {
    /// The system exception this error is raised as: kind, minor code and completion
    /// status. The one place they are decided (the table in the module docs).
    pub fn exception(&self) -> (SystemExceptionKind, u32, CompletionStatus) {
        use minor::*;
        use CompletionStatus::{Maybe, No, Yes};
        use SystemExceptionKind as K;
        match self {
            Error::Connect { .. } => (K::Transient, TRANSIENT_CONNECT_FAILED, No),
            Error::Timeout { phase, .. } => match phase {
                Phase::Connect => (K::Transient, TRANSIENT_CONNECT_TIMEOUT, No),
                Phase::Wait => (K::Timeout, TIMEOUT_WAIT, No),
                Phase::Send => (K::Timeout, TIMEOUT_SEND, No),
                Phase::Receive => (K::Timeout, TIMEOUT_RECEIVE, Maybe),
            },
            Error::Send { .. } => (K::CommFailure, COMM_FAILURE_SEND, No),
            Error::Receive { .. } => (K::CommFailure, COMM_FAILURE_RECEIVE, Maybe),
            Error::ConnectionClosed { .. } => (K::CommFailure, COMM_FAILURE_CLOSED, Maybe),
            Error::Protocol { .. } | Error::UnexpectedMessage { .. } => {
                (K::CommFailure, COMM_FAILURE_PROTOCOL, Maybe)
            }
            Error::MessageError { .. } => (K::CommFailure, COMM_FAILURE_MESSAGE_ERROR, No),
            Error::BatchSend { .. } => (K::CommFailure, COMM_FAILURE_BATCH_SEND, Maybe),
            Error::OnewaysLost { .. } => (K::CommFailure, COMM_FAILURE_ONEWAYS_LOST, No),
            Error::FlushLost { .. } => (K::CommFailure, COMM_FAILURE_ONEWAYS_LOST, Maybe),
            Error::ForwardLimit { .. } => (K::Transient, TRANSIENT_FORWARD_LIMIT, No),
            Error::ResendLimit { .. } => (K::Transient, TRANSIENT_RESEND_LIMIT, No),
            Error::PoolPoisoned { .. } => (K::Transient, TRANSIENT_POOL_POISONED, No),
            Error::NoUsableProfile => (K::InvObjref, INV_OBJREF_NO_IIOP_PROFILE, No),
            Error::GiopVersion { .. } => (K::InvObjref, INV_OBJREF_GIOP_VERSION, No),
            Error::EncodeRequest(_) => (K::Marshal, MARSHAL_REQUEST, No),
            Error::MarshalArguments(e) => (e.exception_kind().into(), e.minor(), No),
            Error::DecodeReply(e) => giop_exception(e, Yes),
            Error::DecodeForward(e) => giop_exception(e, No),
            Error::AddressingMode => (K::Marshal, MARSHAL_ADDRESSING_MODE, No),
            Error::NoObjectKey => (K::ObjectNotExist, OBJECT_NOT_EXIST_NO_KEY, No),
            Error::NoReply => (K::Internal, INTERNAL_NO_REPLY, Maybe),
            Error::RepliedTwice => (K::BadInvOrder, BAD_INV_ORDER_REPLIED, Yes),
            Error::ReplyHandleDropped => (K::Internal, INTERNAL_REPLY_HANDLE_DROPPED, Maybe),
            Error::EncodeReply(e) => giop_exception(e, Yes),
            Error::SendReply { .. } => (K::CommFailure, COMM_FAILURE_SEND_REPLY, Yes),
            Error::IncarnationLost => (K::Internal, INTERNAL_INCARNATION_LOST, No),
            Error::NotOfType { .. } => (K::BadParam, BAD_PARAM_NOT_OF_TYPE, No),
            Error::NoInterfaceRepository => (K::NoImplement, NO_IMPLEMENT_INTERFACE_REPOSITORY, No),
            Error::ThreadSpawn { .. } | Error::BidirReader { .. } | Error::AsyncThread { .. } => {
                (K::NoResources, NO_RESOURCES_THREAD, No)
            }
            Error::DeferredLost => (K::Internal, INTERNAL_DEFERRED_LOST, Maybe),
            Error::Listen { .. } => (K::Initialize, INITIALIZE_LISTEN, No),
            Error::NoEndpoint => (K::Initialize, INITIALIZE_NO_ENDPOINT, No),
        }
    }

    /// The system exception a call returns for this error, with the error as its detail.
    // Out of line and cold: error construction must not weigh on the callers' hot paths.
    #[cold]
    #[inline(never)]
    pub fn to_system_exception(self) -> SystemException {
        let (kind, minor, completed) = self.exception();
        SystemException::new(kind, minor)
            .completed(completed)
            .with_detail(self)
    }
}

/// A GIOP or CDR decoding error keeps the kind and minor code of its mapping.
fn giop_exception(
    e: &GiopError,
    completed: CompletionStatus,
) -> (SystemExceptionKind, u32, CompletionStatus) {
    let s = SystemException::from(e.clone());
    (s.kind, s.minor, completed)
}

impl From<Error> for SystemException {
    fn from(e: Error) -> SystemException {
        e.to_system_exception()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;
    use std::time::Duration;

    /// One table: no two entries share an exception and code, none is 0, and the module
    /// docs' table lists exactly the table's entries.
    #[test]
    fn minor_table_is_unique_and_documented() {
        let mut seen = std::collections::HashSet::new();
        let mut names = std::collections::HashSet::new();
        for m in minor::TABLE {
            assert!(seen.insert((m.kind, m.code)), "{} shares its code", m.name);
            assert!(names.insert(m.name), "{} twice", m.name);
            assert_ne!(m.code & 0xfff, 0, "{}: no code 0", m.name);
            assert!(!m.meaning.is_empty());
            assert_eq!(minor::lookup(m.kind, m.code), Some(m));
        }
        let docs: Vec<&str> = include_str!("error.rs")
            .lines()
            .filter(|l| l.starts_with("//! | ") && l.contains("](minor::"))
            .collect();
        for m in minor::TABLE {
            let row = format!(
                "//! | {} | `{:#010x}` | [`{}`](minor::{}) |",
                m.kind.name(),
                m.code,
                m.name,
                m.name
            );
            assert!(
                docs.iter().any(|l| l.starts_with(&row)),
                "no docs row {row}"
            );
        }
        assert_eq!(docs.len(), minor::TABLE.len());
    }

    /// Every `SystemException::new` in the runtime, `corbina-naming` and the generator's
    /// templates names its minor code: no numeric literal (minor 0 above all) outside tests.
    #[test]
    fn no_raise_site_passes_a_literal_minor() {
        fn files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    files(&p, out);
                } else if p.extension().is_some_and(|x| x == "rs")
                    && p.file_name().is_some_and(|n| n != "tests.rs")
                {
                    out.push(p);
                }
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut all = Vec::new();
        for dir in ["src", "../corbina-naming/src", "../corbina-codegen/src"] {
            files(&root.join(dir), &mut all);
        }
        let mut bad = Vec::new();
        let mut sites = 0;
        for f in &all {
            let text = std::fs::read_to_string(f).unwrap();
            // Unit tests sit at the end of a file.
            let code = text.split("#[cfg(test)]").next().unwrap();
            // `{SYS}::new(`: the generator's templates.
            let starts = code
                .match_indices("SystemException::new(")
                .chain(code.match_indices("{SYS}::new("));
            for (at, m) in starts {
                let args = &code[at + m.len()..];
                let mut depth = 0;
                let end = args
                    .char_indices()
                    .find(|&(_, c)| {
                        match c {
                            '(' => depth += 1,
                            ')' if depth == 0 => return true,
                            ')' => depth -= 1,
                            _ => {}
                        }
                        false
                    })
                    .map_or(args.len(), |(i, _)| i);
                let Some((_, minor)) = args[..end].split_once(',') else {
                    continue; // the constructor itself
                };
                sites += 1;
                let literal = minor
                    .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                    .any(|t| t.starts_with(|c: char| c.is_ascii_digit()));
                if literal {
                    bad.push(format!("{}: {}", f.display(), minor.trim()));
                }
            }
        }
        assert!(sites > 30, "found only {sites} raise sites");
        assert!(bad.is_empty(), "literal minor codes: {bad:#?}");
    }

    fn tcp(port: u16) -> Address {
        Address::Tcp {
            host: "127.0.0.1".into(),
            port,
        }
    }

    /// The table of the module docs, row by row: no minor 0, and the wire ignores the detail.
    #[test]
    fn mapping_table() {
        use CompletionStatus::{Maybe, No, Yes};
        use SystemExceptionKind as K;
        let io = || io::Error::from(io::ErrorKind::BrokenPipe);
        let ep = tcp(5002);
        let marshal = MarshalError::EndOfData {
            offset: 0,
            needed: 4,
            remaining: 0,
        };
        let rows: Vec<(Error, K, u32, CompletionStatus)> = vec![
            (
                Error::Connect {
                    endpoint: ep.clone(),
                    source: io(),
                },
                K::Transient,
                0x4342_0212,
                No,
            ),
            (
                Error::Timeout {
                    endpoint: ep.clone(),
                    phase: Phase::Connect,
                },
                K::Transient,
                0x4342_0210,
                No,
            ),
            (
                Error::Timeout {
                    endpoint: ep.clone(),
                    phase: Phase::Wait,
                },
                K::Timeout,
                0x4342_0222,
                No,
            ),
            (
                Error::Timeout {
                    endpoint: ep.clone(),
                    phase: Phase::Send,
                },
                K::Timeout,
                0x4342_0220,
                No,
            ),
            (
                Error::Timeout {
                    endpoint: ep.clone(),
                    phase: Phase::Receive,
                },
                K::Timeout,
                0x4342_0221,
                Maybe,
            ),
            (
                Error::Send {
                    endpoint: ep.clone(),
                    source: io(),
                },
                K::CommFailure,
                0x4342_0201,
                No,
            ),
            (
                Error::Receive {
                    endpoint: ep.clone(),
                    source: io(),
                },
                K::CommFailure,
                0x4342_0202,
                Maybe,
            ),
            (
                Error::ConnectionClosed {
                    endpoint: ep.clone(),
                },
                K::CommFailure,
                0x4342_0203,
                Maybe,
            ),
            (
                Error::Protocol {
                    endpoint: ep.clone(),
                    source: ConnectionError::Closed,
                },
                K::CommFailure,
                0x4342_0204,
                Maybe,
            ),
            (
                Error::UnexpectedMessage {
                    endpoint: ep.clone(),
                    message: "a Request",
                },
                K::CommFailure,
                0x4342_0204,
                Maybe,
            ),
            (
                Error::MessageError {
                    endpoint: ep.clone(),
                },
                K::CommFailure,
                0x4342_0205,
                No,
            ),
            (
                Error::BatchSend {
                    endpoint: ep.clone(),
                    count: 3,
                    source: io(),
                },
                K::CommFailure,
                0x4342_0206,
                Maybe,
            ),
            (
                Error::OnewaysLost {
                    endpoint: ep.clone(),
                    count: 2,
                },
                K::CommFailure,
                0x4342_4e03,
                No,
            ),
            (
                Error::FlushLost { count: 2 },
                K::CommFailure,
                0x4342_4e03,
                Maybe,
            ),
            (
                Error::ForwardLimit { limit: 8 },
                K::Transient,
                0x4342_4e01,
                No,
            ),
            (
                Error::ResendLimit {
                    endpoint: ep.clone(),
                    resends: 16,
                },
                K::Transient,
                0x4342_4e02,
                No,
            ),
            (
                Error::PoolPoisoned {
                    endpoint: ep.clone(),
                },
                K::Transient,
                0x4342_0211,
                No,
            ),
            (Error::NoUsableProfile, K::InvObjref, 0x4342_0230, No),
            (
                Error::GiopVersion { minor: 9 },
                K::InvObjref,
                0x4342_0231,
                No,
            ),
            (
                Error::EncodeRequest(ConnectionError::Closed),
                K::Marshal,
                0x4342_0240,
                No,
            ),
            (
                Error::MarshalArguments(marshal.clone()),
                K::Marshal,
                0x4342_0001,
                No,
            ),
            (
                Error::MarshalArguments(MarshalError::BoundExceeded {
                    length: 3,
                    bound: 2,
                }),
                K::BadParam,
                0x4342_0009,
                No,
            ),
            (
                Error::DecodeReply(GiopError::Marshal(marshal.clone())),
                K::Marshal,
                0x4342_0001,
                Yes,
            ),
            (
                Error::DecodeForward(GiopError::Marshal(marshal.clone())),
                K::Marshal,
                0x4342_0001,
                No,
            ),
            (Error::AddressingMode, K::Marshal, 0x4342_0241, No),
            (Error::NoObjectKey, K::ObjectNotExist, 0x4342_0250, No),
            (Error::NoReply, K::Internal, 0x4342_0260, Maybe),
            (Error::RepliedTwice, K::BadInvOrder, 0x4f4d_0009, Yes),
            (
                Error::EncodeReply(GiopError::Marshal(marshal)),
                K::Marshal,
                0x4342_0001,
                Yes,
            ),
            (
                Error::SendReply { source: io() },
                K::CommFailure,
                0x4342_0207,
                Yes,
            ),
            (Error::IncarnationLost, K::Internal, 0x4342_0262, No),
            (
                Error::NoInterfaceRepository,
                K::NoImplement,
                0x4342_0270,
                No,
            ),
            (
                Error::NotOfType {
                    repository_id: "IDL:Bench:1.0",
                },
                K::BadParam,
                0x4342_02a0,
                No,
            ),
            (
                Error::ThreadSpawn { source: io() },
                K::NoResources,
                0x4342_0280,
                No,
            ),
            (Error::DeferredLost, K::Internal, 0x4342_0261, Maybe),
            (
                Error::Listen { source: io() },
                K::Initialize,
                0x4342_0290,
                No,
            ),
            (Error::NoEndpoint, K::Initialize, 0x4342_0291, No),
        ];
        for (error, kind, minor, completed) in rows {
            let shown = error.to_string();
            let e = SystemException::from(error);
            assert_eq!(
                (e.kind, e.minor, e.completed),
                (kind, minor, completed),
                "{e}"
            );
            // The detail is shown, and equality (what the wire carries) ignores it.
            assert!(e.to_string().ends_with(&format!(": {shown}")), "{e}");
            assert_eq!(e, SystemException::new(kind, minor).completed(completed));
            assert_eq!(e.to_body(), e.clone().without_detail().to_body());
        }
        // The public constants that predate this table keep their values.
        assert_eq!(crate::client::MINOR_FORWARD_LIMIT, 0x4342_4e01);
        assert_eq!(crate::client::MINOR_RETRIES_EXHAUSTED, 0x4342_4e02);
        assert_eq!(crate::client::MINOR_ONEWAYS_LOST, 0x4342_4e03);
        assert_eq!(
            crate::orb::corbaname_minor::OBJECT_NOT_EXIST_NOT_FOUND,
            0x4342_0251
        );
    }

    /// A detail costs one word: a call's `Result` stays two words, returned in registers.
    #[test]
    fn system_exception_stays_small() {
        assert_eq!(std::mem::size_of::<SystemException>(), 16);
        assert_eq!(std::mem::size_of::<Result<(), SystemException>>(), 16);
    }

    /// A refused connect shows the endpoint, the phase and the OS error, and the detail
    /// can be matched on.
    #[test]
    fn connect_refused_says_where_and_why() {
        // A port nothing listens on: bound, then closed.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let endpoint = tcp(port);
        let Err(os) = endpoint.connect(Duration::from_secs(5), &Default::default()) else {
            panic!("connected to a closed port");
        };
        let os_text = os.to_string();
        let e = SystemException::from(Error::Connect {
            endpoint,
            source: os,
        });
        let shown = e.to_string();
        assert!(
            shown.starts_with("TRANSIENT (minor 0x43420212, completed NO): "),
            "{shown}"
        );
        assert!(shown.contains(&format!("tcp 127.0.0.1:{port}")), "{shown}");
        assert!(shown.contains("connect"), "{shown}");
        assert!(shown.contains(&os_text), "{shown}");
        let detail = e.detail().and_then(|d| d.downcast_ref::<Error>());
        assert!(matches!(detail, Some(Error::Connect { .. })), "{e:?}");
        let source = e.source().and_then(|d| d.source());
        assert_eq!(
            source
                .and_then(|s| s.downcast_ref::<io::Error>())
                .map(|s| s.kind()),
            Some(io::ErrorKind::ConnectionRefused)
        );
    }

    /// Through the ORB's call path: a call to a closed port is TRANSIENT and says where and
    /// why; a call to a server that never replies is TIMEOUT in the receive phase.
    #[test]
    fn calls_report_endpoint_and_phase() {
        let (orb, _) = crate::Orb::init(Vec::<String>::new()).unwrap();
        let closed = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let obj = orb
            .string_to_object(&format!("corbaloc:iiop:1.2@127.0.0.1:{closed}/k"))
            .unwrap();
        let e = obj
            .invoke("op", |_| Ok(()), |_| Ok(()), crate::no_user)
            .unwrap_err();
        assert_eq!(
            (e.kind, e.minor, e.completed),
            (
                SystemExceptionKind::Transient,
                minor::TRANSIENT_CONNECT_FAILED,
                CompletionStatus::No
            )
        );
        let shown = e.to_string();
        assert!(
            shown.contains(&format!("connect to tcp 127.0.0.1:{closed} failed: ")),
            "{shown}"
        );
        assert!(shown.contains("refused"), "{shown}");

        // Accepts, reads, never replies.
        let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = silent.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut s, _) = silent.accept().unwrap();
            let _ = io::copy(&mut s, &mut io::sink());
        });
        let obj = orb
            .string_to_object(&format!("corbaloc:iiop:1.2@127.0.0.1:{port}/k"))
            .unwrap();
        let obj = orb
            .object_with_timeout(&obj, Duration::from_millis(50))
            .unwrap();
        let e = obj
            .invoke("op", |_| Ok(()), |_| Ok(()), crate::no_user)
            .unwrap_err();
        assert_eq!(
            (e.kind, e.minor, e.completed),
            (
                SystemExceptionKind::Timeout,
                minor::TIMEOUT_RECEIVE,
                CompletionStatus::Maybe
            )
        );
        assert!(
            e.to_string()
                .ends_with(&format!(": receive from tcp 127.0.0.1:{port} timed out")),
            "{e}"
        );
        orb.destroy();
        server.join().unwrap();
    }

    /// A TIMEOUT says in which phase and where.
    #[test]
    fn timeout_says_the_phase() {
        let e = SystemException::from(Error::Timeout {
            endpoint: tcp(5002),
            phase: Phase::Receive,
        });
        assert_eq!(
            e.to_string(),
            "TIMEOUT (minor 0x43420221, completed MAYBE): receive from tcp 127.0.0.1:5002 timed out"
        );
        let e = SystemException::from(Error::Timeout {
            endpoint: Address::Unix("/tmp/s".into()),
            phase: Phase::Send,
        });
        assert!(
            e.to_string().ends_with(": send to unix /tmp/s timed out"),
            "{e}"
        );
    }
}
