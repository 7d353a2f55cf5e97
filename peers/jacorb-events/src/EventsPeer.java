// JacORB 3.9 event service clients (and JacORB's own event channel) for corbina-events'
// interop tests; documented in peers/README.md. One mode per process:
//
//   EventsPeer supply CHANNEL N      push supplier: pushes N events, prints "pushed N"
//   EventsPeer consume CHANNEL N     push consumer: prints "ready" once connected, then
//                                    each event ("long 3", "string jacorb 4"), then "done"
//   EventsPeer pull CHANNEL N        pull consumer: the same with pull()
//   EventsPeer serve IORFILE         JacORB's EventChannelImpl, its IOR written to IORFILE
//   EventsPeer filter FACTORY        CosNotifyFilter client: makes an EXTENDED_TCL filter
//                                    with one constraint, prints "match true|false" for
//                                    four structured events and two anys, then "done"
//
// CHANNEL is anything string_to_object takes (IOR:, corbaloc:). Events alternate a long i
// and a string "jacorb i".
import java.nio.file.Files;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

import org.omg.CORBA.Any;
import org.omg.CORBA.ORB;
import org.omg.CORBA.TCKind;
import org.omg.CosEventChannelAdmin.EventChannel;
import org.omg.CosEventChannelAdmin.EventChannelHelper;
import org.omg.CosEventChannelAdmin.ProxyPullSupplier;
import org.omg.CosEventChannelAdmin.ProxyPushConsumer;
import org.omg.CosEventChannelAdmin.ProxyPushSupplier;
import org.omg.CosEventComm.PushConsumerHelper;
import org.omg.CosEventComm.PushConsumerPOA;
import org.omg.PortableServer.POA;
import org.omg.PortableServer.POAHelper;

public class EventsPeer {
    static Any event(ORB orb, int i) {
        Any a = orb.create_any();
        if (i % 2 == 0) {
            a.insert_long(i);
        } else {
            a.insert_string("jacorb " + i);
        }
        return a;
    }

    static String show(Any a) {
        TCKind k = a.type().kind();
        if (k == TCKind.tk_long) {
            return "long " + a.extract_long();
        }
        if (k == TCKind.tk_string) {
            return "string " + a.extract_string();
        }
        return "kind " + k.value();
    }

    static class Consumer extends PushConsumerPOA {
        final BlockingQueue<Any> events = new ArrayBlockingQueue<>(100000);

        public void push(Any data) {
            events.add(data);
        }

        public void disconnect_push_consumer() {}
    }

    static org.omg.CosNotification.StructuredEvent structured(ORB orb, String type, short priority) {
        Any p = orb.create_any();
        p.insert_short(priority);
        Any body = orb.create_any();
        body.insert_string("body");
        Any sev = orb.create_any();
        sev.insert_long(priority * 10);
        return new org.omg.CosNotification.StructuredEvent(
                new org.omg.CosNotification.EventHeader(
                        new org.omg.CosNotification.FixedEventHeader(
                                new org.omg.CosNotification.EventType("Telecom", type), "e"),
                        new org.omg.CosNotification.Property[] {
                            new org.omg.CosNotification.Property("priority", p)
                        }),
                new org.omg.CosNotification.Property[] {
                    new org.omg.CosNotification.Property("severity", sev)
                },
                body);
    }

    static void filter(ORB orb, String factoryUrl) throws Exception {
        org.omg.CosNotifyFilter.FilterFactory ff =
                org.omg.CosNotifyFilter.FilterFactoryHelper.narrow(orb.string_to_object(factoryUrl));
        org.omg.CosNotifyFilter.Filter f = ff.create_filter("EXTENDED_TCL");
        f.add_constraints(new org.omg.CosNotifyFilter.ConstraintExp[] {
            new org.omg.CosNotifyFilter.ConstraintExp(
                    new org.omg.CosNotification.EventType[] {
                        new org.omg.CosNotification.EventType("Telecom", "Alarm")
                    },
                    "$type_name == 'Alarm' and $.header.variable_header(priority) > 3"),
            new org.omg.CosNotifyFilter.ConstraintExp(
                    new org.omg.CosNotification.EventType[] {
                        new org.omg.CosNotification.EventType("", "%ANY")
                    },
                    "$ > 10")
        });
        System.out.println("match " + f.match_structured(structured(orb, "Alarm", (short) 5)));
        System.out.println("match " + f.match_structured(structured(orb, "Alarm", (short) 3)));
        System.out.println("match " + f.match_structured(structured(orb, "Fault", (short) 9)));
        System.out.println("match " + f.match_structured(structured(orb, "Alarm", (short) 4)));
        Any big = orb.create_any();
        big.insert_long(11);
        Any small = orb.create_any();
        small.insert_long(10);
        System.out.println("match " + f.match(big));
        System.out.println("match " + f.match(small));
        f.destroy();
    }

    public static void main(String[] args) throws Exception {
        ORB orb = ORB.init(args, null);
        POA poa = POAHelper.narrow(orb.resolve_initial_references("RootPOA"));
        poa.the_POAManager().activate();
        String mode = args[0];
        if (mode.equals("serve")) {
            org.jacorb.events.EventChannelImpl channel =
                    new org.jacorb.events.EventChannelImpl(orb, poa);
            String ior = orb.object_to_string(poa.servant_to_reference(channel));
            Files.write(Paths.get(args[1] + ".tmp"), (ior + "\n").getBytes());
            Files.move(Paths.get(args[1] + ".tmp"), Paths.get(args[1]),
                    StandardCopyOption.ATOMIC_MOVE);
            orb.run();
            return;
        }
        if (mode.equals("filter")) {
            filter(orb, args[1]);
            System.out.println("done");
            System.out.flush();
            orb.shutdown(false);
            System.exit(0);
        }
        EventChannel channel = EventChannelHelper.narrow(orb.string_to_object(args[1]));
        int n = Integer.parseInt(args[2]);
        if (mode.equals("supply")) {
            ProxyPushConsumer proxy = channel.for_suppliers().obtain_push_consumer();
            proxy.connect_push_supplier(null);
            for (int i = 0; i < n; i++) {
                proxy.push(event(orb, i));
            }
            proxy.disconnect_push_consumer();
            System.out.println("pushed " + n);
        } else if (mode.equals("consume")) {
            Consumer c = new Consumer();
            ProxyPushSupplier proxy = channel.for_consumers().obtain_push_supplier();
            proxy.connect_push_consumer(PushConsumerHelper.narrow(poa.servant_to_reference(c)));
            System.out.println("ready");
            System.out.flush();
            for (int i = 0; i < n; i++) {
                Any a = c.events.poll(20, TimeUnit.SECONDS);
                if (a == null) {
                    System.out.println("timeout after " + i);
                    break;
                }
                System.out.println(show(a));
            }
            proxy.disconnect_push_supplier();
        } else if (mode.equals("pull")) {
            ProxyPullSupplier proxy = channel.for_consumers().obtain_pull_supplier();
            proxy.connect_pull_consumer(null);
            System.out.println("ready");
            System.out.flush();
            for (int i = 0; i < n; i++) {
                System.out.println(show(proxy.pull()));
            }
            proxy.disconnect_pull_supplier();
        } else {
            throw new IllegalArgumentException("unknown mode " + mode);
        }
        System.out.println("done");
        System.out.flush();
        orb.shutdown(false);
        System.exit(0);
    }
}
