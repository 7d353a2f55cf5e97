// JacORB 3.9 notification service clients for corbina-events' interop tests; documented in
// peers/README.md. One mode per process:
//
//   NotifyPeer supply CHANNEL N          structured push supplier: pushes N structured
//                                        events, prints "pushed N"
//   NotifyPeer consume CHANNEL N EXPR    structured push consumer whose proxy has a filter
//                                        (EXTENDED_TCL EXPR, made by the channel's default
//                                        filter factory): prints "ready" once connected,
//                                        then each event ("Telecom/Alarm jacorb 0 p=0"),
//                                        then "done"
//   NotifyPeer supply-seq CHANNEL N B    sequence push supplier: pushes N events in batches
//                                        of B (push_structured_events), prints "pushed N"
//   NotifyPeer pull-supply CHANNEL N     structured pull supplier: the channel pulls N events
//                                        from it (try_pull_structured_event), prints
//                                        "pulled N" once it took the last
//   NotifyPeer pull CHANNEL N            structured pull consumer (pull_structured_event)
//   NotifyPeer pull-seq CHANNEL N        sequence pull consumer (pull_structured_events)
//   NotifyPeer consume-seq CHANNEL N     sequence push consumer
//                                        (the three consumers print "ready" once connected,
//                                        each event, then "done")
//
// CHANNEL is a CosNotifyChannelAdmin::EventChannel (IOR:, corbaloc:). Event i has the type
// Telecom/Alarm when i is even, Telecom/Fault when odd, the name "jacorb i", the header
// field Priority = i and the filterable field severity = i.
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

import org.omg.CORBA.Any;
import org.omg.CORBA.IntHolder;
import org.omg.CORBA.ORB;
import org.omg.CosNotification.EventHeader;
import org.omg.CosNotification.EventType;
import org.omg.CosNotification.FixedEventHeader;
import org.omg.CosNotification.Property;
import org.omg.CosNotification.StructuredEvent;
import org.omg.CosNotifyChannelAdmin.ClientType;
import org.omg.CosNotifyChannelAdmin.EventChannel;
import org.omg.CosNotifyChannelAdmin.EventChannelHelper;
import org.omg.CosNotifyChannelAdmin.SequenceProxyPullSupplier;
import org.omg.CosNotifyChannelAdmin.SequenceProxyPullSupplierHelper;
import org.omg.CosNotifyChannelAdmin.SequenceProxyPushConsumer;
import org.omg.CosNotifyChannelAdmin.SequenceProxyPushConsumerHelper;
import org.omg.CosNotifyChannelAdmin.SequenceProxyPushSupplier;
import org.omg.CosNotifyChannelAdmin.SequenceProxyPushSupplierHelper;
import org.omg.CosNotifyChannelAdmin.StructuredProxyPullConsumer;
import org.omg.CosNotifyChannelAdmin.StructuredProxyPullConsumerHelper;
import org.omg.CosNotifyChannelAdmin.StructuredProxyPullSupplier;
import org.omg.CosNotifyChannelAdmin.StructuredProxyPullSupplierHelper;
import org.omg.CosNotifyChannelAdmin.StructuredProxyPushConsumer;
import org.omg.CosNotifyChannelAdmin.StructuredProxyPushConsumerHelper;
import org.omg.CosNotifyChannelAdmin.StructuredProxyPushSupplier;
import org.omg.CosNotifyChannelAdmin.StructuredProxyPushSupplierHelper;
import org.omg.CosNotifyComm.SequencePushConsumerHelper;
import org.omg.CosNotifyComm.SequencePushConsumerPOA;
import org.omg.CosNotifyComm.StructuredPullSupplierHelper;
import org.omg.CosNotifyComm.StructuredPullSupplierPOA;
import org.omg.CosNotifyComm.StructuredPushConsumerHelper;
import org.omg.CosNotifyComm.StructuredPushConsumerPOA;
import org.omg.CosNotifyFilter.ConstraintExp;
import org.omg.CosNotifyFilter.Filter;
import org.omg.PortableServer.POA;
import org.omg.PortableServer.POAHelper;

public class NotifyPeer {
    static StructuredEvent event(ORB orb, int i) {
        Any p = orb.create_any();
        p.insert_short((short) i);
        Any sev = orb.create_any();
        sev.insert_long(i);
        Any body = orb.create_any();
        body.insert_string("body " + i);
        String type = i % 2 == 0 ? "Alarm" : "Fault";
        return new StructuredEvent(
                new EventHeader(
                        new FixedEventHeader(new EventType("Telecom", type), "jacorb " + i),
                        new Property[] {new Property("Priority", p)}),
                new Property[] {new Property("severity", sev)},
                body);
    }

    static String show(StructuredEvent e) {
        String p = "?";
        for (Property h : e.header.variable_header) {
            if (h.name.equals("Priority")) {
                p = Short.toString(h.value.extract_short());
            }
        }
        EventType t = e.header.fixed_header.event_type;
        return t.domain_name + "/" + t.type_name + " " + e.header.fixed_header.event_name + " p=" + p;
    }

    static class Consumer extends StructuredPushConsumerPOA {
        final BlockingQueue<StructuredEvent> events = new ArrayBlockingQueue<>(100000);

        public void push_structured_event(StructuredEvent e) {
            events.add(e);
        }

        public void disconnect_structured_push_consumer() {}

        public void offer_change(EventType[] added, EventType[] removed) {}
    }

    static class SequenceConsumer extends SequencePushConsumerPOA {
        final BlockingQueue<StructuredEvent> events = new ArrayBlockingQueue<>(100000);

        public void push_structured_events(StructuredEvent[] batch) {
            for (StructuredEvent e : batch) {
                events.add(e);
            }
        }

        public void disconnect_sequence_push_consumer() {}

        public void offer_change(EventType[] added, EventType[] removed) {}
    }

    // Hands out events 0..n to the channel's try_pull; `taken` counts down to the last.
    static class Source extends StructuredPullSupplierPOA {
        final ORB orb;
        final int n;
        int next = 0;
        final java.util.concurrent.CountDownLatch taken;

        Source(ORB orb, int n) {
            this.orb = orb;
            this.n = n;
            this.taken = new java.util.concurrent.CountDownLatch(n);
        }

        public synchronized StructuredEvent pull_structured_event() {
            throw new org.omg.CORBA.TRANSIENT();
        }

        public synchronized StructuredEvent try_pull_structured_event(
                org.omg.CORBA.BooleanHolder has) {
            if (next >= n) {
                has.value = false;
                return event(orb, 0);
            }
            has.value = true;
            taken.countDown();
            return event(orb, next++);
        }

        public void disconnect_structured_pull_supplier() {}

        public void subscription_change(EventType[] added, EventType[] removed) {}
    }

    // Prints the n events `next` gives (null: none within 20 s), then disconnects.
    interface Next {
        StructuredEvent[] next() throws Exception;
    }

    static void print(int n, Next next) throws Exception {
        System.out.println("ready");
        System.out.flush();
        int i = 0;
        while (i < n) {
            StructuredEvent[] got = next.next();
            if (got == null) {
                System.out.println("timeout after " + i);
                break;
            }
            for (StructuredEvent e : got) {
                System.out.println(show(e));
                i++;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        ORB orb = ORB.init(args, null);
        POA poa = POAHelper.narrow(orb.resolve_initial_references("RootPOA"));
        poa.the_POAManager().activate();
        String mode = args[0];
        EventChannel channel = EventChannelHelper.narrow(orb.string_to_object(args[1]));
        int n = Integer.parseInt(args[2]);
        IntHolder id = new IntHolder();
        if (mode.equals("supply")) {
            StructuredProxyPushConsumer proxy = StructuredProxyPushConsumerHelper.narrow(
                    channel.default_supplier_admin().obtain_notification_push_consumer(
                            ClientType.STRUCTURED_EVENT, id));
            proxy.connect_structured_push_supplier(null);
            for (int i = 0; i < n; i++) {
                proxy.push_structured_event(event(orb, i));
            }
            proxy.disconnect_structured_push_consumer();
            System.out.println("pushed " + n);
        } else if (mode.equals("consume")) {
            StructuredProxyPushSupplier proxy = StructuredProxyPushSupplierHelper.narrow(
                    channel.default_consumer_admin().obtain_notification_push_supplier(
                            ClientType.STRUCTURED_EVENT, id));
            Filter f = channel.default_filter_factory().create_filter("EXTENDED_TCL");
            f.add_constraints(new ConstraintExp[] {
                new ConstraintExp(new EventType[] {new EventType("*", "*")}, args[3])
            });
            proxy.add_filter(f);
            Consumer c = new Consumer();
            proxy.connect_structured_push_consumer(
                    StructuredPushConsumerHelper.narrow(poa.servant_to_reference(c)));
            System.out.println("ready");
            System.out.flush();
            for (int i = 0; i < n; i++) {
                StructuredEvent e = c.events.poll(20, TimeUnit.SECONDS);
                if (e == null) {
                    System.out.println("timeout after " + i);
                    break;
                }
                System.out.println(show(e));
            }
            proxy.disconnect_structured_push_supplier();
        } else if (mode.equals("supply-seq")) {
            SequenceProxyPushConsumer proxy = SequenceProxyPushConsumerHelper.narrow(
                    channel.default_supplier_admin().obtain_notification_push_consumer(
                            ClientType.SEQUENCE_EVENT, id));
            proxy.connect_sequence_push_supplier(null);
            int b = Integer.parseInt(args[3]);
            for (int i = 0; i < n; i += b) {
                StructuredEvent[] batch = new StructuredEvent[Math.min(b, n - i)];
                for (int j = 0; j < batch.length; j++) {
                    batch[j] = event(orb, i + j);
                }
                proxy.push_structured_events(batch);
            }
            proxy.disconnect_sequence_push_consumer();
            System.out.println("pushed " + n);
        } else if (mode.equals("pull-supply")) {
            StructuredProxyPullConsumer proxy = StructuredProxyPullConsumerHelper.narrow(
                    channel.default_supplier_admin().obtain_notification_pull_consumer(
                            ClientType.STRUCTURED_EVENT, id));
            Source s = new Source(orb, n);
            proxy.connect_structured_pull_supplier(
                    StructuredPullSupplierHelper.narrow(poa.servant_to_reference(s)));
            if (s.taken.await(20, TimeUnit.SECONDS)) {
                System.out.println("pulled " + n);
            } else {
                System.out.println("timeout after " + (n - s.taken.getCount()));
            }
            proxy.disconnect_structured_pull_consumer();
        } else if (mode.equals("pull")) {
            StructuredProxyPullSupplier proxy = StructuredProxyPullSupplierHelper.narrow(
                    channel.default_consumer_admin().obtain_notification_pull_supplier(
                            ClientType.STRUCTURED_EVENT, id));
            proxy.connect_structured_pull_consumer(null);
            print(n, () -> new StructuredEvent[] {proxy.pull_structured_event()});
            proxy.disconnect_structured_pull_supplier();
        } else if (mode.equals("pull-seq")) {
            SequenceProxyPullSupplier proxy = SequenceProxyPullSupplierHelper.narrow(
                    channel.default_consumer_admin().obtain_notification_pull_supplier(
                            ClientType.SEQUENCE_EVENT, id));
            proxy.connect_sequence_pull_consumer(null);
            print(n, () -> proxy.pull_structured_events(5));
            proxy.disconnect_sequence_pull_supplier();
        } else if (mode.equals("consume-seq")) {
            SequenceProxyPushSupplier proxy = SequenceProxyPushSupplierHelper.narrow(
                    channel.default_consumer_admin().obtain_notification_push_supplier(
                            ClientType.SEQUENCE_EVENT, id));
            SequenceConsumer c = new SequenceConsumer();
            proxy.connect_sequence_push_consumer(
                    SequencePushConsumerHelper.narrow(poa.servant_to_reference(c)));
            print(n, () -> {
                StructuredEvent e = c.events.poll(20, TimeUnit.SECONDS);
                return e == null ? null : new StructuredEvent[] {e};
            });
            proxy.disconnect_sequence_push_supplier();
        } else {
            throw new IllegalArgumentException("unknown mode " + mode);
        }
        System.out.println("done");
        System.out.flush();
        orb.shutdown(false);
        System.exit(0);
    }
}
