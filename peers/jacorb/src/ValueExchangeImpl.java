import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

import org.omg.CORBA.BAD_PARAM;

/** Values::ValueExchange (peers/values.idl) as JacORB serves it. */
final class ValueExchangeImpl extends Values.ValueExchangePOA {
    /** A list of n nodes, ids 0..n-1, whose last node points back to the first. */
    static Values.Node ring(int n) {
        if (n < 1) {
            throw new BAD_PARAM("make_cycle needs n >= 1");
        }
        Values.Node head = new ValueImpls.NodeValue(0);
        Values.Node last = head;
        for (int i = 1; i < n; i++) {
            Values.Node node = new ValueImpls.NodeValue(i);
            last.next = node;
            last = node;
        }
        last.next = head;
        return head;
    }

    static int distinct(Values.Node head) {
        Set<Values.Node> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Values.Node n = head; n != null && seen.add(n); n = n.next) {}
        return seen.size();
    }

    @Override
    public Values.Node make_cycle(int n) {
        return ring(n);
    }

    @Override
    public int count_distinct(Values.Node head) {
        return distinct(head);
    }

    @Override
    public boolean same_node(Values.Node a, Values.Node b) {
        return a == b;
    }

    @Override
    public Values.Node echo_node(Values.Node head) {
        return head;
    }

    @Override
    public org.omg.CORBA.Any echo_any(org.omg.CORBA.Any a) {
        return a;
    }

    @Override
    public int count_in_any(org.omg.CORBA.Any a) {
        if (!a.type().equivalent(Values.NodeHelper.type())) {
            return -1;
        }
        return distinct(Values.NodeHelper.extract(a));
    }

    @Override
    public String[] echo_box(String[] b) {
        return b;
    }

    @Override
    public int box_length(String[] b) {
        return b == null ? -1 : b.length;
    }

    @Override
    public String describe(Values.Base b) {
        return ValueImpls.describe(b);
    }

    @Override
    public Values.Base make_derived(String name, int extra) {
        return new ValueImpls.DerivedValue(name, extra);
    }

    @Override
    public Values.Base make_sibling(String name, int count) {
        return new ValueImpls.SiblingValue(name, count);
    }

    @Override
    public Values.Base echo_base(Values.Base b) {
        return b;
    }
}
