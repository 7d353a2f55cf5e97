import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.Properties;

import org.omg.CORBA.ORB;
import org.omg.PortableServer.POA;
import org.omg.PortableServer.POAHelper;

/**
 * The JacORB peer of Corbina's interop tests (documented in peers/README.md).
 *
 * usage: JacorbPeer DIR [JacORB -ORB options]
 *
 * Serves an ScProbe (peers/sc.idl, with the interceptors of ScInitializer) and a
 * Values::ValueExchange (peers/values.idl), writes their IORs to DIR/values.ior and then
 * DIR/sc.ior, and reads commands from stdin, answering each with lines ending in "done":
 *   sc-call IORFILE          calls echo("hi") on the ScProbe in IORFILE; prints
 *                            "reply-context DATA|none" and "result R"
 *   values-check IORFILE     runs ValueChecks against the ValueExchange in IORFILE
 *   derived-factory on|off   registers or unregisters Derived's value factory
 * It exits at the end of stdin.
 */
public final class JacorbPeer {
    private JacorbPeer() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: JacorbPeer DIR [-ORB options]");
            System.exit(2);
        }
        Path dir = Paths.get(args[0]);
        Properties props = new Properties();
        props.setProperty(
            "org.omg.PortableInterceptor.ORBInitializerClass." + ScInitializer.class.getName(), "");
        ORB orb = ORB.init(Arrays.copyOfRange(args, 1, args.length), props);
        boolean derivedFactory = true;
        ValueImpls.register(orb, derivedFactory);
        POA poa = POAHelper.narrow(orb.resolve_initial_references("RootPOA"));
        org.omg.CORBA.Object values = poa.servant_to_reference(new ValueExchangeImpl());
        org.omg.CORBA.Object sc = poa.servant_to_reference(new ScProbeImpl());
        poa.the_POAManager().activate();
        write(dir.resolve("values.ior"), orb.object_to_string(values));
        write(dir.resolve("sc.ior"), orb.object_to_string(sc));

        PrintStream out = new PrintStream(System.out, true, "UTF-8");
        BufferedReader in =
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            String[] w = line.trim().split("\\s+");
            if (w[0].isEmpty()) {
                continue;
            }
            try {
                switch (w[0]) {
                    case "sc-call": {
                        ScInitializer.lastReplyContext = null;
                        ScProbe p = ScProbeHelper.unchecked_narrow(orb.string_to_object(read(w[1])));
                        String r = p.echo("hi");
                        String ctx = ScInitializer.lastReplyContext;
                        out.println("reply-context " + (ctx == null ? "none" : ctx));
                        out.println("result " + r);
                        break;
                    }
                    case "values-check":
                        new ValueChecks(
                            Values.ValueExchangeHelper.unchecked_narrow(orb.string_to_object(read(w[1]))),
                            derivedFactory, out).runAll();
                        break;
                    case "derived-factory":
                        derivedFactory = w[1].equals("on");
                        ValueImpls.register(orb, derivedFactory);
                        break;
                    default:
                        out.println("error unknown command " + w[0]);
                }
            } catch (Exception e) {
                out.println("error " + e.toString().replace('\n', ' '));
            }
            out.println("done");
        }
        orb.shutdown(false);
        System.exit(0);
    }

    private static String read(String file) throws Exception {
        return new String(Files.readAllBytes(Paths.get(file)), StandardCharsets.US_ASCII).trim();
    }

    /** Writes through a rename, so a reader never sees half an IOR. */
    private static void write(Path file, String ior) throws Exception {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.write(tmp, (ior + "\n").getBytes(StandardCharsets.US_ASCII));
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
    }
}
