import java.util.Arrays;

import org.omg.CORBA.ORB;

/**
 * The JacORB peer of the differential harness's static types (peers/differential_static.idl).
 *
 * usage: DiffStaticEcho IORFILE [JacORB -ORB options]
 *
 * Serves dts::StaticEcho: each operation takes one inout parameter and leaves it as it came,
 * so JacORB's generated skeleton unmarshals it into the generated Java types and marshals it
 * back. Exits when stdin closes.
 */
public final class DiffStaticEcho extends dts.StaticEchoPOA {
    @Override public void echo_scalars(dts.ScalarsHolder v) {}
    @Override public void echo_strings(dts.StringsHolder v) {}
    @Override public void echo_unions(dts.UnionsHolder v) {}
    @Override public void echo_collections(dts.CollectionsHolder v) {}
    @Override public void echo_values(dts.ValuesHolder v) {}
    @Override public void echo_node(dts.NodeHolder v) {}
    @Override public void echo_g56(dts.G56_S1Holder v) {}
    @Override public void echo_g87(dts.G87_U1Holder v) {}
    // echo_wide_label_unions and echo_g164 are left out of JacORB's IDL (DTS_JACORB).

    /** dts::Node, built by its own factory. */
    static final class NodeValue extends dts.Node {
        private static final long serialVersionUID = 1L;
    }

    static final class NodeFactory implements org.omg.CORBA.portable.ValueFactory {
        @Override
        public java.io.Serializable read_value(org.omg.CORBA_2_3.portable.InputStream in) {
            return in.read_value(new NodeValue());
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: DiffStaticEcho IORFILE [-ORB options]");
            System.exit(2);
        }
        ORB orb = ORB.init(Arrays.copyOfRange(args, 1, args.length), null);
        ((org.omg.CORBA_2_3.ORB) orb)
            .register_value_factory("IDL:dts/Node:1.0", new NodeFactory());
        DiffEcho.serve(orb, new DiffStaticEcho(), args[0]);
    }
}
