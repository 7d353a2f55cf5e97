import java.io.PrintStream;
import java.util.Arrays;

/**
 * JacORB as the client of a Values::ValueExchange (a Corbina server): one line per check,
 * "check NAME ok" or "check NAME FAIL detail".
 */
final class ValueChecks {
    private final Values.ValueExchange vx;
    private final boolean derivedFactory;
    private final PrintStream out;

    ValueChecks(Values.ValueExchange vx, boolean derivedFactory, PrintStream out) {
        this.vx = vx;
        this.derivedFactory = derivedFactory;
        this.out = out;
    }

    private interface Check {
        String run() throws Exception;
    }

    /** Runs `c`: it returns null when it passed, else what was wrong. */
    private void check(String name, Check c) {
        String wrong;
        try {
            wrong = c.run();
        } catch (Throwable t) {
            wrong = t.toString().replace('\n', ' ');
        }
        out.println("check " + name + (wrong == null ? " ok" : " FAIL " + wrong));
    }

    /** null when head is a ring of n nodes with ids 0..n-1, else what is wrong with it. */
    static String ringProblem(Values.Node head, int n) {
        Values.Node node = head;
        for (int i = 0; i < n; i++) {
            if (node == null) {
                return "list ends after " + i + " nodes";
            }
            if (node.id != i) {
                return "node " + i + " has id " + node.id;
            }
            if (i > 0 && node == head) {
                return "cycle of " + i + " nodes";
            }
            node = node.next;
        }
        return node == head ? null : "node " + (n - 1) + " does not point back to the head";
    }

    static String expect(Object got, Object want) {
        return java.util.Objects.equals(got, want) ? null : "got " + got + ", want " + want;
    }

    void runAll() {
        for (int n : new int[] {1, 3, 500}) {
            check("make_cycle_" + n, () -> ringProblem(vx.make_cycle(n), n));
            check("count_distinct_" + n, () -> expect(vx.count_distinct(ValueExchangeImpl.ring(n)), n));
        }
        check("echo_node", () -> ringProblem(vx.echo_node(ValueExchangeImpl.ring(3)), 3));
        check("same_node_shared", () -> {
            Values.Node a = new ValueImpls.NodeValue(7);
            return expect(vx.same_node(a, a), true);
        });
        check("same_node_distinct", () ->
            expect(vx.same_node(new ValueImpls.NodeValue(7), new ValueImpls.NodeValue(7)), false));
        check("box_null", () -> {
            String[] back = vx.echo_box(null);
            return back != null ? "got " + Arrays.toString(back) : expect(vx.box_length(null), -1);
        });
        String[][] boxes = {{}, {"a", "bc", "def"}, {"grüße", "日本語", "😀 ok"}};
        String[] names = {"box_empty", "box_three", "box_non_ascii"};
        for (int i = 0; i < boxes.length; i++) {
            String[] b = boxes[i];
            check(names[i], () -> {
                String[] back = vx.echo_box(b);
                if (back == null || !Arrays.equals(back, b)) {
                    return "got " + Arrays.toString(back) + ", want " + Arrays.toString(b);
                }
                return expect(vx.box_length(b), b.length);
            });
        }
        check("describe_base", () -> expect(vx.describe(new ValueImpls.BaseValue("b")), "Base:b"));
        check("describe_derived", () ->
            expect(vx.describe(new ValueImpls.DerivedValue("d", 7)), "Derived:d:7"));
        check("make_derived", () -> expect(ValueImpls.describe(vx.make_derived("m", 5)),
            derivedFactory ? "Derived:m:5" : "Base:m"));
        check("echo_base_derived", () ->
            expect(ValueImpls.describe(vx.echo_base(new ValueImpls.DerivedValue("e", 9))),
                derivedFactory ? "Derived:e:9" : "Base:e"));
        check("describe_sibling", () ->
            expect(vx.describe(new ValueImpls.SiblingValue("s", 3)), "Sibling:s:3"));
        // Not truncatable: without its factory this side cannot read a Sibling (MARSHAL).
        check("make_sibling", () -> {
            try {
                String got = ValueImpls.describe(vx.make_sibling("n", 2));
                return derivedFactory ? expect(got, "Sibling:n:2") : "got " + got + ", want MARSHAL";
            } catch (org.omg.CORBA.MARSHAL e) {
                return derivedFactory ? e.toString() : null;
            }
        });
    }
}
