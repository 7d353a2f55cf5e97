import java.io.Serializable;

import org.omg.CORBA.portable.ValueFactory;

/**
 * The implementations of peers/values.idl's valuetypes and their factories. They are not named
 * DerivedDefaultFactory (the Java mapping's fallback when no factory is registered) or
 * DerivedImpl, so that a type whose factory is unregistered has none: JacORB truncates it to a
 * base.
 */
final class ValueImpls {
    private ValueImpls() {}

    static final String NODE = "IDL:Values/Node:1.0";
    static final String BASE = "IDL:Values/Base:1.0";
    static final String DERIVED = "IDL:Values/Derived:1.0";
    static final String SIBLING = "IDL:Values/Sibling:1.0";

    static final class NodeValue extends Values.Node {
        private static final long serialVersionUID = 1L;

        NodeValue() {}

        NodeValue(int id) {
            this.id = id;
        }
    }

    static final class BaseValue extends Values.Base {
        private static final long serialVersionUID = 1L;

        BaseValue() {}

        BaseValue(String name) {
            this.name = name;
        }
    }

    static final class DerivedValue extends Values.Derived {
        private static final long serialVersionUID = 1L;

        DerivedValue() {}

        DerivedValue(String name, int extra) {
            this.name = name;
            this.extra = extra;
        }
    }

    static final class SiblingValue extends Values.Sibling {
        private static final long serialVersionUID = 1L;

        SiblingValue() {}

        SiblingValue(String name, int count) {
            this.name = name;
            this.count = count;
        }
    }

    static final class NodeFactory implements ValueFactory {
        @Override
        public Serializable read_value(org.omg.CORBA_2_3.portable.InputStream in) {
            return in.read_value(new NodeValue());
        }
    }

    static final class BaseFactory implements ValueFactory {
        @Override
        public Serializable read_value(org.omg.CORBA_2_3.portable.InputStream in) {
            return in.read_value(new BaseValue());
        }
    }

    static final class DerivedFactory implements ValueFactory {
        @Override
        public Serializable read_value(org.omg.CORBA_2_3.portable.InputStream in) {
            return in.read_value(new DerivedValue());
        }
    }

    static final class SiblingFactory implements ValueFactory {
        @Override
        public Serializable read_value(org.omg.CORBA_2_3.portable.InputStream in) {
            return in.read_value(new SiblingValue());
        }
    }

    /**
     * Registers the factories; without `derived`, Derived's and Sibling's are left out (or
     * taken back).
     */
    static void register(org.omg.CORBA.ORB orb, boolean derived) {
        org.omg.CORBA_2_3.ORB o = (org.omg.CORBA_2_3.ORB) orb;
        o.register_value_factory(NODE, new NodeFactory());
        o.register_value_factory(BASE, new BaseFactory());
        if (derived) {
            o.register_value_factory(DERIVED, new DerivedFactory());
            o.register_value_factory(SIBLING, new SiblingFactory());
        } else {
            o.unregister_value_factory(DERIVED);
            o.unregister_value_factory(SIBLING);
        }
    }

    /**
     * "Base:<name>", "Derived:<name>:<extra>" or "Sibling:<name>:<count>" for the type JacORB
     * decoded; "null".
     */
    static String describe(Values.Base b) {
        if (b == null) {
            return "null";
        }
        if (b instanceof Values.Derived) {
            return "Derived:" + b.name + ":" + ((Values.Derived) b).extra;
        }
        if (b instanceof Values.Sibling) {
            return "Sibling:" + b.name + ":" + ((Values.Sibling) b).count;
        }
        return "Base:" + b.name;
    }
}
