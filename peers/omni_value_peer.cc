// omni_value_peer.cc -- objects by value between omniORB's C++ mapping and another ORB
// (values.idl: crates/corbina/tests/values_omniorb.rs).
//
// usage: omni_value_peer --server IORFILE [--no-derived-factory] [-ORB options]
//          Serves a Values::ValueExchange; writes its IOR to IORFILE (whole, through a rename).
//        omni_value_peer --client IOR|IORFILE [--server-truncates] [--no-derived-factory]
//                        [--deep N] [-ORB options]
//          Calls every operation of a ValueExchange and checks the answers: prints one line
//          per check ("ok NAME" or "FAIL NAME: why"), then "passed P failed F"; exit 0 when
//          every check passed. --server-truncates: the server has no Derived factory, so
//          describe and echo_base see a Derived argument as its Base. --deep N: the length
//          of the long cycles made and sent (default 1000; each node nests one value deeper).
//
// --no-derived-factory leaves Values::Derived and Values::Sibling without a value factory, so a
// Derived that arrives is truncated to Values::Base (its repository-id list names Base, and it is
// chunked) and a Sibling (not truncatable) cannot be read at all (MARSHAL).
// Node, Base and Derived have no operations, so omniidl's Node_init etc. are concrete; they
// must still be registered (boxes register themselves).
//
// Semantics of ValueExchange (every server of values.idl has them): make_cycle(n) makes nodes
// with ids 1..n, node i's next is node i+1 and node n's next is node 1 (n < 1: BAD_PARAM);
// count_distinct counts the nodes reachable through next, each once (null: 0); describe
// gives "Base:<name>", "Derived:<name>:<extra>" or "Sibling:<name>:<count>" for what the
// receiver decoded ("null" for a null value); echo_* return their argument.

#include <omniORB4/CORBA.h>
#include "values.hh"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <vector>

using Values::Node;

// A new list of n nodes with ids first..first+n-1; cyclic: the last node points to the first.
static Node* make_list(CORBA::Long n, bool cyclic, CORBA::Long first = 1) {
  std::vector<Node*> nodes;
  for (CORBA::Long i = 0; i < n; ++i) nodes.push_back(new OBV_Values::Node(first + i, 0));
  for (CORBA::Long i = 0; i + 1 < n; ++i) nodes[i]->next(nodes[i + 1]);  // next() adds a ref
  if (cyclic && n > 0) nodes[n - 1]->next(nodes[0]);
  for (CORBA::Long i = 1; i < n; ++i) nodes[i]->_remove_ref();  // held by their predecessor
  return n > 0 ? nodes[0] : 0;
}

// Drops the caller's reference to a list, unlinking its nodes first so that a cycle is freed.
static void release_list(Node* head) {
  if (!head) return;
  std::vector<Node*> nodes;
  std::set<Node*> seen;
  for (Node* n = head; n && seen.insert(n).second; n = n->next()) {
    n->_add_ref();
    nodes.push_back(n);
  }
  for (Node* n : nodes) n->next(0);
  for (Node* n : nodes) n->_remove_ref();
  head->_remove_ref();
}

static CORBA::Long count_nodes(Node* head) {
  std::set<Node*> seen;
  for (Node* n = head; n && seen.insert(n).second; n = n->next()) {
  }
  return (CORBA::Long)seen.size();
}

// Whether head is a cycle of exactly n nodes with ids 1..n; why it is not, otherwise.
static std::string check_cycle(Node* head, CORBA::Long n) {
  Node* p = head;
  for (CORBA::Long i = 1; i <= n; ++i) {
    if (!p) return "node " + std::to_string(i) + " is null";
    if (p->id() != i)
      return "node " + std::to_string(i) + " has id " + std::to_string(p->id());
    p = p->next();
  }
  if (p != head) return "node " + std::to_string(n) + "'s next is not the head (no cycle)";
  return "";
}

static std::string describe_value(Values::Base* b) {
  if (!b) return "null";
  if (Values::Derived* d = Values::Derived::_downcast(b))
    return std::string("Derived:") + d->name() + ":" + std::to_string(d->extra());
  if (Values::Sibling* s = Values::Sibling::_downcast(b))
    return std::string("Sibling:") + s->name() + ":" + std::to_string(s->count());
  return std::string("Base:") + b->name();
}

class ValueExchangeImpl : public POA_Values::ValueExchange {
 public:
  Node* make_cycle(CORBA::Long n) override {
    if (n < 1) throw CORBA::BAD_PARAM(0, CORBA::COMPLETED_NO);
    Node* head = make_list(n, true);
    // The reply marshals the cycle; ownership of one reference passes to the skeleton. The
    // cycle itself keeps the nodes alive afterwards: a small, bounded leak per call in a test
    // peer (omniORB has no cycle collection either).
    return head;
  }
  CORBA::Long count_distinct(Node* head) override { return count_nodes(head); }
  CORBA::Boolean same_node(Node* a, Node* b) override { return a == b; }
  Node* echo_node(Node* head) override {
    if (head) head->_add_ref();
    return head;
  }
  CORBA::Any* echo_any(const CORBA::Any& a) override { return new CORBA::Any(a); }
  CORBA::Long count_in_any(const CORBA::Any& a) override {
    Node* head = 0;
    if (!(a >>= head)) return -1;  // the Any keeps its reference
    return count_nodes(head);
  }
  Values::StringSeqBox* echo_box(Values::StringSeqBox* b) override {
    if (b) b->_add_ref();
    return b;
  }
  CORBA::Long box_length(Values::StringSeqBox* b) override {
    return b ? (CORBA::Long)b->_value().length() : -1;
  }
  char* describe(Values::Base* b) override { return CORBA::string_dup(describe_value(b).c_str()); }
  Values::Base* make_derived(const char* name, CORBA::Long extra) override {
    return new OBV_Values::Derived(name, extra);
  }
  Values::Base* make_sibling(const char* name, CORBA::Long count) override {
    return new OBV_Values::Sibling(name, count);
  }
  Values::Base* echo_base(Values::Base* b) override {
    if (b) b->_add_ref();
    return b;
  }
};

// ---- client ----

static int passed = 0, failed = 0;

static void check(const std::string& name, const std::string& why) {
  if (why.empty()) {
    ++passed;
    std::printf("ok %s\n", name.c_str());
  } else {
    ++failed;
    std::printf("FAIL %s: %s\n", name.c_str(), why.c_str());
  }
  std::fflush(stdout);
}

static std::string expect_eq(const std::string& got, const std::string& want) {
  return got == want ? "" : "got \"" + got + "\", want \"" + want + "\"";
}

static std::string expect_long(CORBA::Long got, CORBA::Long want) {
  return got == want ? "" : "got " + std::to_string(got) + ", want " + std::to_string(want);
}

static Values::StringSeqBox* make_box(const std::vector<const char*>& items) {
  Values::StringSeq s;
  s.length(items.size());
  for (size_t i = 0; i < items.size(); ++i) s[i] = CORBA::string_dup(items[i]);
  return new Values::StringSeqBox(s);
}

static std::string box_diff(Values::StringSeqBox* got, const std::vector<const char*>& want) {
  if (!got) return "null box";
  if (got->_value().length() != want.size())
    return "length " + std::to_string(got->_value().length());
  for (size_t i = 0; i < want.size(); ++i)
    if (std::strcmp(got->_value()[i], want[i]) != 0)
      return "item " + std::to_string(i) + " is \"" + std::string(got->_value()[i]) + "\"";
  return "";
}

// Runs one check, turning a CORBA exception into a failure.
template <class F>
static void run(const std::string& name, F f) {
  try {
    check(name, f());
  } catch (const CORBA::SystemException& e) {
    check(name, std::string("raised ") + e._name() + " minor " + std::to_string(e.minor()));
  } catch (const CORBA::Exception& e) {
    check(name, std::string("raised ") + e._name());
  }
}

// derived_factory: whether this side has a factory for Derived; server_truncates: whether the
// server has none (it then decodes a Derived argument as its Base).
static void client(Values::ValueExchange_ptr x, bool derived_factory, bool server_truncates,
                   CORBA::Long deep) {
  for (CORBA::Long n : {1, 3, deep}) {
    run("make_cycle(" + std::to_string(n) + ")", [&] {
      Node* head = x->make_cycle(n);
      std::string why = check_cycle(head, n);
      release_list(head);
      return why;
    });
  }
  for (CORBA::Long n : {1, 3, deep}) {
    run("count_distinct(cycle " + std::to_string(n) + ")", [&] {
      Node* head = make_list(n, true);
      CORBA::Long got = x->count_distinct(head);
      release_list(head);
      return expect_long(got, n);
    });
  }
  run("count_distinct(list 5)", [&] {
    Node* head = make_list(5, false);
    CORBA::Long got = x->count_distinct(head);
    release_list(head);
    return expect_long(got, 5);
  });
  run("count_distinct(null)", [&] { return expect_long(x->count_distinct(0), 0); });
  run("same_node(a, a)", [&] {
    Node* a = make_list(2, false);
    bool got = x->same_node(a, a);
    release_list(a);
    return got ? "" : "false for one node passed twice";
  });
  run("same_node(a, copy of a)", [&] {
    Node* a = make_list(2, false);
    Node* b = make_list(2, false);
    bool got = x->same_node(a, b);
    release_list(a);
    release_list(b);
    return got ? "true for two distinct nodes" : "";
  });
  run("echo_node(cycle 3)", [&] {
    Node* head = make_list(3, true);
    Node* back = x->echo_node(head);
    std::string why = check_cycle(back, 3);
    release_list(head);
    release_list(back);
    return why;
  });
  run("echo_any(cycle 3)", [&] {
    Node* head = make_list(3, true);
    CORBA::Any a;
    a <<= head;  // copying: the Any adds a reference
    CORBA::Long counted = x->count_in_any(a);
    CORBA::Any_var back = x->echo_any(a);
    release_list(head);
    if (counted != 3) return "count_in_any " + std::to_string(counted);
    Node* got = 0;
    if (!(back.in() >>= got)) return std::string("the Any echoed holds no Node");
    return check_cycle(got, 3);
  });
  run("count_in_any(long)", [&] {
    CORBA::Any a;
    a <<= (CORBA::Long)5;
    return expect_long(x->count_in_any(a), -1);
  });
  run("echo_node(null)", [&] {
    Node* back = x->echo_node(0);
    return back ? std::string("not null") : std::string();
  });

  run("echo_box(null)", [&] {
    Values::StringSeqBox_var back = x->echo_box(0);
    return back.in() ? std::string("not null") : std::string();
  });
  run("box_length(null)", [&] { return expect_long(x->box_length(0), -1); });
  std::vector<std::vector<const char*>> boxes = {
      {}, {"a", "bb", "ccc"}, {"\xc5\xbc\xc3\xb3\xc5\x82w", "\xe6\x97\xa5\xe6\x9c\xac", ""}};
  for (const auto& items : boxes) {
    std::string what = items.empty() ? "empty" : std::string(items[0]) + ",…";
    run("echo_box(" + what + ")", [&] {
      Values::StringSeqBox_var b = make_box(items);
      Values::StringSeqBox_var back = x->echo_box(b);
      return box_diff(back.in(), items);
    });
    run("box_length(" + what + ")", [&] {
      Values::StringSeqBox_var b = make_box(items);
      return expect_long(x->box_length(b), (CORBA::Long)items.size());
    });
  }

  run("describe(Base)", [&] {
    Values::Base_var b = new OBV_Values::Base("plain");
    CORBA::String_var s = x->describe(b);
    return expect_eq(s.in(), "Base:plain");
  });
  run("describe(Derived)", [&] {
    Values::Base_var b = new OBV_Values::Derived("d", 7);
    CORBA::String_var s = x->describe(b);
    return expect_eq(s.in(), server_truncates ? "Base:d" : "Derived:d:7");
  });
  // A large chunked value (its state well beyond one receive buffer).
  run("describe(Derived 100 KB)", [&] {
    std::string big(100000, 'x');
    Values::Base_var b = new OBV_Values::Derived(big.c_str(), 1);
    CORBA::String_var s = x->describe(b);
    return expect_eq(s.in(), server_truncates ? "Base:" + big : "Derived:" + big + ":1");
  });
  run("describe(null)", [&] {
    CORBA::String_var s = x->describe(0);
    return expect_eq(s.in(), "null");
  });
  // Without the Derived factory this side truncates the Derived to its Base.
  const std::string derived_m = derived_factory ? "Derived:m:9" : "Base:m";
  run("make_derived", [&] {
    Values::Base_var b = x->make_derived("m", 9);
    return expect_eq(describe_value(b.in()), derived_m);
  });
  const std::string derived_e = derived_factory && !server_truncates ? "Derived:e:5" : "Base:e";
  run("echo_base(Derived)", [&] {
    Values::Base_var b = new OBV_Values::Derived("e", 5);
    Values::Base_var back = x->echo_base(b);
    return expect_eq(describe_value(back.in()), derived_e);
  });
  run("echo_base(Base)", [&] {
    Values::Base_var b = new OBV_Values::Base("b");
    Values::Base_var back = x->echo_base(b);
    return expect_eq(describe_value(back.in()), "Base:b");
  });
  // Sibling is not truncatable: a side without its factory cannot read it (MARSHAL).
  run("describe(Sibling)", [&]() -> std::string {
    Values::Base_var b = new OBV_Values::Sibling("s", 3);
    try {
      CORBA::String_var s = x->describe(b);
      if (server_truncates) return std::string("got \"") + s.in() + "\", want MARSHAL";
      return expect_eq(s.in(), "Sibling:s:3");
    } catch (const CORBA::MARSHAL&) {
      return server_truncates ? "" : "raised MARSHAL";
    }
  });
  run("make_sibling", [&]() -> std::string {
    try {
      Values::Base_var b = x->make_sibling("n", 2);
      if (!derived_factory) return "got " + describe_value(b.in()) + ", want MARSHAL";
      return expect_eq(describe_value(b.in()), "Sibling:n:2");
    } catch (const CORBA::MARSHAL&) {
      return derived_factory ? "raised MARSHAL" : "";
    }
  });
}

static std::string read_ior(const std::string& arg) {
  if (arg.rfind("IOR:", 0) == 0 || arg.rfind("corbaloc:", 0) == 0) return arg;
  std::ifstream f(arg.c_str());
  std::string ior;
  std::getline(f, ior);
  return ior;
}

int main(int argc, char** argv) {
  CORBA::ORB_var orb = CORBA::ORB_init(argc, argv);
  std::string mode, target;
  bool derived_factory = true;
  bool server_truncates = false;
  CORBA::Long deep = 1000;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "--server" || a == "--client") && i + 1 < argc) {
      mode = a;
      target = argv[++i];
    } else if (a == "--no-derived-factory") {
      derived_factory = false;
    } else if (a == "--deep" && i + 1 < argc) {
      deep = std::atoi(argv[++i]);
    } else if (a == "--server-truncates") {
      server_truncates = true;
    } else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (mode.empty()) {
    std::fprintf(stderr,
                 "usage: %s --server IORFILE | --client IOR|IORFILE [--server-truncates] "
                 "[--no-derived-factory] [--deep N] "
                 "[-ORB options]\n",
                 argv[0]);
    return 2;
  }
  // The ORB holds a reference to each factory from here on.
  CORBA::ValueFactoryBase_var f;
  f = new Values::Node_init;
  orb->register_value_factory(Values::Node::_PD_repoId, f);
  f = new Values::Base_init;
  orb->register_value_factory(Values::Base::_PD_repoId, f);
  if (derived_factory) {
    f = new Values::Derived_init;
    orb->register_value_factory(Values::Derived::_PD_repoId, f);
    f = new Values::Sibling_init;
    orb->register_value_factory(Values::Sibling::_PD_repoId, f);
  }

  if (mode == "--server") {
    CORBA::Object_var o = orb->resolve_initial_references("RootPOA");
    PortableServer::POA_var poa = PortableServer::POA::_narrow(o);
    ValueExchangeImpl* impl = new ValueExchangeImpl;
    PortableServer::ObjectId_var id = poa->activate_object(impl);
    CORBA::Object_var ref = poa->id_to_reference(id);
    CORBA::String_var s = orb->object_to_string(ref);
    std::string tmp = target + ".tmp";
    {
      std::ofstream out(tmp.c_str());
      out << s.in() << "\n";
    }
    std::rename(tmp.c_str(), target.c_str());
    PortableServer::POAManager_var pm = poa->the_POAManager();
    pm->activate();
    orb->run();
    return 0;
  }

  std::string ior = read_ior(target);
  int rc;
  try {
    CORBA::Object_var obj = orb->string_to_object(ior.c_str());
    Values::ValueExchange_var x = Values::ValueExchange::_narrow(obj);
    if (CORBA::is_nil(x)) {
      std::printf("FAIL narrow: not a ValueExchange\n");
      return 1;
    }
    client(x, derived_factory, server_truncates, deep);
    std::printf("passed %d failed %d\n", passed, failed);
    rc = failed == 0 ? 0 : 1;
  } catch (const CORBA::Exception& e) {
    std::printf("FAIL %s\n", e._name());
    rc = 1;
  }
  orb->destroy();
  return rc;
}
