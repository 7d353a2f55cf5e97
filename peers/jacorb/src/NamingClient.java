// A CosNaming client on JacORB, for the naming service's interop tests:
//   java NamingClient ROOT bind NAME IOR | resolve NAME | list
// ROOT is the root context's corbaloc URL or IOR; NAME a stringified name. Prints the
// resolved IOR, or one binding per line ("name" or "name/" for a context); exits 1 with
// the exception on stderr on failure.
import org.omg.CORBA.ORB;
import org.omg.CosNaming.Binding;
import org.omg.CosNaming.BindingIteratorHolder;
import org.omg.CosNaming.BindingListHolder;
import org.omg.CosNaming.BindingType;
import org.omg.CosNaming.NamingContextExt;
import org.omg.CosNaming.NamingContextExtHelper;

public class NamingClient {
    public static void main(String[] args) {
        ORB orb = ORB.init(new String[0], null);
        try {
            NamingContextExt root = NamingContextExtHelper.narrow(orb.string_to_object(args[0]));
            switch (args[1]) {
                case "bind":
                    root.rebind(root.to_name(args[2]), orb.string_to_object(args[3]));
                    break;
                case "resolve":
                    System.out.println(orb.object_to_string(root.resolve_str(args[2])));
                    break;
                case "list": {
                    BindingListHolder list = new BindingListHolder();
                    BindingIteratorHolder rest = new BindingIteratorHolder();
                    root.list(1000, list, rest);
                    for (Binding b : list.value) {
                        String n = root.to_string(b.binding_name);
                        System.out.println(b.binding_type == BindingType.ncontext ? n + "/" : n);
                    }
                    break;
                }
                default:
                    throw new IllegalArgumentException("unknown command " + args[1]);
            }
        } catch (Exception e) {
            System.err.println("NamingClient: " + e);
            System.exit(1);
        } finally {
            orb.shutdown(false);
        }
        System.exit(0);
    }
}
