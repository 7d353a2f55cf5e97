// omniORB server for tests/interop.rs: echoes every value of tests/interop/types.idl back.
// usage: types_server IOR_FILE [-ORB options]
#include <fstream>
#include <iostream>

#include "types.hh"

using namespace Interop;

class EchoImpl : public POA_Interop::TypesEcho {
 public:
  Prims echo_prims(const Prims& v) override { return v; }
  Point echo_point(const Point& v) override { return v; }
  Points* echo_points(const Points& v) override { return new Points(v); }
  Nested echo_nested(const Nested& v) override { return v; }
  // Assigned, not copy-constructed: omniORB's copy constructor of a fixed<9,3> member drops
  // its digits and marshalling it then fails an assertion.
  Texts* echo_texts(const Texts& v) override { return copy(v); }
  TextsAlias* echo_texts_alias(const TextsAlias& v) override { return copy(v); }
  static Texts* copy(const Texts& v) {
    Texts* r = new Texts;
    *r = v;
    return r;
  }
  Grid_slice* echo_grid(const Grid v) override { return Grid_dup(v); }
  Pair_slice* echo_pair(const Pair v) override { return Pair_dup(v); }
  Names_slice* echo_names(const Names v) override { return Names_dup(v); }
  Price echo_price(const Price& v) override { return v; }
  PointsSeqSeq* echo_points_seq_seq(const PointsSeqSeq& v) override {
    return new PointsSeqSeq(v);
  }
  Color echo_color(Color v) override { return v; }
  ByLong* echo_by_long(const ByLong& v) override { return new ByLong(v); }
  ByEnum* echo_by_enum(const ByEnum& v) override { return new ByEnum(v); }
  ByChar echo_by_char(const ByChar& v) override { return v; }
  ByBool* echo_by_bool(const ByBool& v) override { return new ByBool(v); }
  Unions* echo_unions(const Unions& v) override { return new Unions(v); }
  Tree* echo_tree(const Tree& v) override { return new Tree(v); }
  Holder* echo_holder(const Holder& v) override { return new Holder(v); }
  TypesEcho_ptr echo_ref(TypesEcho_ptr v) override { return Interop::TypesEcho::_duplicate(v); }
  CORBA::Any* echo_any(const CORBA::Any& v) override { return new CORBA::Any(v); }
  CORBA::LongDouble echo_long_double(CORBA::LongDouble v) override { return v; }
  CORBA::WChar echo_wchar(CORBA::WChar v) override { return v; }
  CORBA::WChar* echo_wstring(const CORBA::WChar* v) override { return CORBA::wstring_dup(v); }

  // t gains a child "swapped"; p is q reversed.
  void swap(Tree& t, Points_out p, const Points& q) override {
    CORBA::ULong n = t.children.length();
    t.children.length(n + 1);
    t.children[n].label = CORBA::string_dup("swapped");
    p = new Points;
    p->length(q.length());
    for (CORBA::ULong i = 0; i < q.length(); ++i) (*p)[i] = q[q.length() - 1 - i];
  }

  void fail(CORBA::Long code, const char* why, const Points& where) override {
    throw Failed(code, why, where);
  }
};

int main(int argc, char** argv) {
  try {
    CORBA::ORB_var orb = CORBA::ORB_init(argc, argv);
    if (argc < 2) {
      std::cerr << "usage: types_server IOR_FILE [-ORB options]\n";
      return 2;
    }
    CORBA::Object_var obj = orb->resolve_initial_references("RootPOA");
    PortableServer::POA_var poa = PortableServer::POA::_narrow(obj);
    PortableServer::Servant_var<EchoImpl> servant = new EchoImpl;
    PortableServer::ObjectId_var id = poa->activate_object(servant);
    CORBA::Object_var ref = poa->id_to_reference(id);
    CORBA::String_var ior = orb->object_to_string(ref);
    {
      // Written whole to a temporary and renamed, so the reader never sees half of it.
      std::string tmp = std::string(argv[1]) + ".tmp";
      std::ofstream f(tmp);
      f << ior << "\n";
      f.close();
      std::rename(tmp.c_str(), argv[1]);
    }
    poa->the_POAManager()->activate();
    orb->run();
    orb->destroy();
  } catch (CORBA::Exception& e) {
    std::cerr << "types_server: CORBA exception " << e._name() << "\n";
    return 1;
  }
  return 0;
}
