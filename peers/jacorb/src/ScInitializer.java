import java.nio.charset.StandardCharsets;

import org.omg.CORBA.BAD_PARAM;
import org.omg.CORBA.LocalObject;
import org.omg.IOP.ServiceContext;
import org.omg.PortableInterceptor.ClientRequestInfo;
import org.omg.PortableInterceptor.ClientRequestInterceptor;
import org.omg.PortableInterceptor.ForwardRequest;
import org.omg.PortableInterceptor.ORBInitInfo;
import org.omg.PortableInterceptor.ORBInitInfoPackage.DuplicateName;
import org.omg.PortableInterceptor.ORBInitializer;
import org.omg.PortableInterceptor.ServerRequestInfo;
import org.omg.PortableInterceptor.ServerRequestInterceptor;

/**
 * Registers the service-context interceptors of the interop tests (the same contexts as
 * peers/omni_sc_peer.cc): every outgoing request carries context 0x43420100 = "from-jacorb", and
 * a request arriving with 0x43420100 gets a reply carrying 0x43420200 = "jacorb:" + its data.
 */
public final class ScInitializer extends LocalObject implements ORBInitializer {
    static final int CTX_REQUEST = 0x43420100;
    static final int CTX_REPLY = 0x43420200;

    /** The data of the last reply context 0x43420200 the client side received (null: none). */
    static volatile String lastReplyContext;

    @Override
    public void pre_init(ORBInitInfo info) {
        try {
            info.add_client_request_interceptor(new Client());
            info.add_server_request_interceptor(new Server());
        } catch (DuplicateName e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void post_init(ORBInitInfo info) {}

    static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    static final class Client extends LocalObject implements ClientRequestInterceptor {
        @Override
        public String name() {
            return "CorbinaScClient";
        }

        @Override
        public void destroy() {}

        @Override
        public void send_request(ClientRequestInfo ri) throws ForwardRequest {
            byte[] data = "from-jacorb".getBytes(StandardCharsets.UTF_8);
            ri.add_request_service_context(new ServiceContext(CTX_REQUEST, data), false);
        }

        @Override
        public void send_poll(ClientRequestInfo ri) {}

        @Override
        public void receive_reply(ClientRequestInfo ri) {
            try {
                lastReplyContext = text(ri.get_reply_service_context(CTX_REPLY).context_data);
            } catch (BAD_PARAM none) {
                lastReplyContext = null;
            }
        }

        @Override
        public void receive_exception(ClientRequestInfo ri) throws ForwardRequest {}

        @Override
        public void receive_other(ClientRequestInfo ri) throws ForwardRequest {}
    }

    static final class Server extends LocalObject implements ServerRequestInterceptor {
        @Override
        public String name() {
            return "CorbinaScServer";
        }

        @Override
        public void destroy() {}

        @Override
        public void receive_request_service_contexts(ServerRequestInfo ri) throws ForwardRequest {
            ServiceContext sc;
            try {
                sc = ri.get_request_service_context(CTX_REQUEST);
            } catch (BAD_PARAM none) {
                return;
            }
            byte[] data = ("jacorb:" + text(sc.context_data)).getBytes(StandardCharsets.UTF_8);
            ri.add_reply_service_context(new ServiceContext(CTX_REPLY, data), false);
        }

        @Override
        public void receive_request(ServerRequestInfo ri) throws ForwardRequest {}

        @Override
        public void send_reply(ServerRequestInfo ri) {}

        @Override
        public void send_exception(ServerRequestInfo ri) throws ForwardRequest {}

        @Override
        public void send_other(ServerRequestInfo ri) throws ForwardRequest {}
    }
}
