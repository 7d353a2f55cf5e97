import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;

import org.omg.CORBA.Any;
import org.omg.CORBA.ORB;
import org.omg.CORBA.TCKind;
import org.omg.CORBA.TypeCode;
import org.omg.DynamicAny.DynAny;
import org.omg.DynamicAny.DynAnyFactory;
import org.omg.DynamicAny.DynAnyFactoryHelper;
import org.omg.PortableServer.POA;
import org.omg.PortableServer.POAHelper;

/**
 * The JacORB echo peer of the differential harness (crates/corbina-testpeers/src/differential).
 *
 * usage: DiffEcho IORFILE [JacORB -ORB options]
 *
 * Serves dt::AnyEcho (peers/differential.idl): echo(a) decodes the Any fully through DynAny
 * (create_dyn_any walks its TypeCode; to_any encodes it again) and returns that. Values whose
 * TypeCode holds a valuetype are returned as JacORB's Any holds them (DynAny makes trees, and
 * value graphs may be cyclic). Exits when stdin closes.
 */
public final class DiffEcho extends dt.AnyEchoPOA {
    private final DynAnyFactory factory;

    private DiffEcho(DynAnyFactory factory) {
        this.factory = factory;
    }

    @Override
    public Any echo(Any a) {
        try {
            return decoded(a);
        } catch (RuntimeException e) {
            // For triage: the stack trace of what the client sees as UNKNOWN or MARSHAL.
            e.printStackTrace();
            throw e;
        }
    }

    private Any decoded(Any a) {
        if (hasValue(a.type(), 0)) {
            return a;
        }
        try {
            DynAny d = factory.create_dyn_any(a);
            Any out = d.to_any();
            d.destroy();
            return out;
        } catch (org.omg.DynamicAny.DynAnyFactoryPackage.InconsistentTypeCode e) {
            throw new org.omg.CORBA.BAD_PARAM("DynAny: inconsistent TypeCode");
        }
    }

    /** dt::LabelNode, built by its own factory (the IDL's one concrete value type). */
    static final class LabelNodeValue extends dt.LabelNode {
        private static final long serialVersionUID = 1L;
    }

    static final class LabelNodeFactory implements org.omg.CORBA.portable.ValueFactory {
        @Override
        public java.io.Serializable read_value(org.omg.CORBA_2_3.portable.InputStream in) {
            return in.read_value(new LabelNodeValue());
        }
    }

    private static boolean hasValue(TypeCode tc, int depth) {
        if (depth > 32) {
            return false;
        }
        try {
            switch (tc.kind().value()) {
                case TCKind._tk_value:
                case TCKind._tk_value_box:
                case TCKind._tk_abstract_interface:
                    return true;
                case TCKind._tk_struct:
                case TCKind._tk_except:
                case TCKind._tk_union:
                    for (int i = 0; i < tc.member_count(); i++) {
                        if (hasValue(tc.member_type(i), depth + 1)) {
                            return true;
                        }
                    }
                    return false;
                case TCKind._tk_sequence:
                case TCKind._tk_array:
                case TCKind._tk_alias:
                    return hasValue(tc.content_type(), depth + 1);
                default:
                    return false;
            }
        } catch (org.omg.CORBA.TypeCodePackage.BadKind | org.omg.CORBA.TypeCodePackage.Bounds e) {
            return false;
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: DiffEcho IORFILE [-ORB options]");
            System.exit(2);
        }
        ORB orb = ORB.init(Arrays.copyOfRange(args, 1, args.length), null);
        DynAnyFactory f =
            DynAnyFactoryHelper.narrow(orb.resolve_initial_references("DynAnyFactory"));
        ((org.omg.CORBA_2_3.ORB) orb)
            .register_value_factory("IDL:dt/LabelNode:1.0", new LabelNodeFactory());
        serve(orb, new DiffEcho(f), args[0]);
    }

    /**
     * Activates {@code servant} in the root POA, writes its IOR to {@code iorFile} (through a
     * rename: the harness never reads half a file), runs the ORB and exits when stdin closes.
     */
    static void serve(ORB orb, org.omg.PortableServer.Servant servant, String iorFile)
            throws Exception {
        POA poa = POAHelper.narrow(orb.resolve_initial_references("RootPOA"));
        org.omg.CORBA.Object ref = poa.servant_to_reference(servant);
        poa.the_POAManager().activate();
        Path file = Paths.get(iorFile);
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.write(tmp, (orb.object_to_string(ref) + "\n").getBytes(StandardCharsets.US_ASCII));
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
        Thread t = new Thread(orb::run);
        t.setDaemon(true);
        t.start();
        while (System.in.read() >= 0) {
            // Until stdin closes.
        }
        System.exit(0);
    }
}
