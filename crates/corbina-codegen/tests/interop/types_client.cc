// omniORB client for tests/interop.rs: sends the known values of tests/interop/types.idl
// to a Corbina TypesEcho server (which checks them) and checks the echoes.
// usage: types_client IOR_FILE; exits 0 when every check passes, 1 otherwise.
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

#include "types.hh"

using namespace Interop;

static int failures = 0;

#define CHECK(what, cond)                                        \
  do {                                                           \
    if (!(cond)) {                                               \
      std::cerr << "FAIL " << what << " (" #cond ")\n";          \
      ++failures;                                                \
    } else {                                                     \
      std::cout << "ok " << what << "\n";                        \
    }                                                            \
  } while (0)

static bool eq(const Point& a, const Point& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
template <class A, class B>
static bool points_eq(const A& a, const B& b) {
  if (a.length() != b.length()) return false;
  for (CORBA::ULong i = 0; i < a.length(); ++i)
    if (!eq(a[i], b[i])) return false;
  return true;
}
static bool eq(const Points& a, const Points& b) { return points_eq(a, b); }
static bool eq(const Nested& a, const Nested& b) {
  return eq(a.origin, b.origin) && a.tint == b.tint && eq(a.corners[0], b.corners[0]) &&
         eq(a.corners[1], b.corners[1]);
}
static bool eq(const char* a, const char* b) { return std::strcmp(a, b) == 0; }
static bool weq(const CORBA::WChar* a, const CORBA::WChar* b) { return std::wcscmp(a, b) == 0; }
template <class S>
static bool seq_eq(const S& a, const S& b) {
  if (a.length() != b.length()) return false;
  for (CORBA::ULong i = 0; i < a.length(); ++i)
    if (!(a[i] == b[i])) return false;
  return true;
}
static bool eq(const Texts& a, const Texts& b) {
  if (!eq(a.s, b.s) || !eq(a.bs, b.bs) || !weq(a.ws, b.ws) || !weq(a.bws, b.bws)) return false;
  if (!seq_eq(a.longs, b.longs) || !seq_eq(a.octets, b.octets) || !seq_eq(a.colors, b.colors))
    return false;
  if (a.strings.length() != b.strings.length()) return false;
  for (CORBA::ULong i = 0; i < a.strings.length(); ++i)
    if (!eq(a.strings[i], b.strings[i])) return false;
  return a.amount == b.amount;
}
static bool eq(const Tree& a, const Tree& b) {
  if (!eq(a.label, b.label) || a.children.length() != b.children.length()) return false;
  for (CORBA::ULong i = 0; i < a.children.length(); ++i)
    if (!eq(a.children[i], b.children[i])) return false;
  return true;
}
static bool eq(const ByLong& a, const ByLong& b) {
  if (a._d() != b._d()) return false;
  switch (a._d()) {
    case 1: return eq(a.text(), b.text());
    case 2: case 3: return a.number() == b.number();
    case -5: return eq(a.where(), b.where());
    default: return a.raw() == b.raw();
  }
}

// ---- The known values; tests/interop.rs has the same ones. ----
static Point point(CORBA::Long i) {
  Point p;
  p.x = i * 10 + 1;
  p.y = -(i * 7);
  p.z = i * 0.5;
  return p;
}
static Points points() {
  Points ps;
  ps.length(3);
  for (CORBA::ULong i = 0; i < 3; ++i) ps[i] = point(i);
  return ps;
}
static Point pt(CORBA::Long x, CORBA::Long y, double z) {
  Point p;
  p.x = x;
  p.y = y;
  p.z = z;
  return p;
}
static Prims prims() {
  Prims p;
  p.s = -12345;
  p.us = 54321;
  p.l = -2000000000;
  p.ul = 4000000000u;
  p.ll = -9000000000000000000LL;
  p.ull = 18000000000000000000ULL;
  p.f = 1.5f;
  p.d = -2.25e100;
  p.ld = 3.75L;
  p.b = true;
  p.o = 0xab;
  p.c = 'Z';
  p.wc = L'\u03a9';
  return p;
}
static Nested nested() {
  Nested n;
  n.origin = pt(3, 4, 5.5);
  n.tint = BLUE;
  n.corners[0] = pt(1, 2, 3.0);
  n.corners[1] = pt(-1, -2, -3.0);
  return n;
}
static Texts texts() {
  Texts t;
  t.s = CORBA::string_dup("hello, omniORB");
  t.bs = CORBA::string_dup("bounded");
  t.ws = CORBA::wstring_dup(L"wide \u2713 text");
  t.bws = CORBA::wstring_dup(L"w\u00efde");
  t.longs.length(4);
  t.longs[0] = 1; t.longs[1] = -2; t.longs[2] = 3; t.longs[3] = 2147483647;
  t.octets.length(4);
  t.octets[0] = 0; t.octets[1] = 1; t.octets[2] = 254; t.octets[3] = 255;
  t.strings.length(3);
  t.strings[0] = CORBA::string_dup("a");
  t.strings[1] = CORBA::string_dup("");
  t.strings[2] = CORBA::string_dup("ccc");
  t.colors.length(2);
  t.colors[0] = GREEN; t.colors[1] = RED;
  t.amount = CORBA::Fixed("123456.789");
  return t;
}
static Tree leaf(const char* label) {
  Tree t;
  t.label = CORBA::string_dup(label);
  return t;
}
static Tree tree() {
  Tree t = leaf("root");
  t.children.length(2);
  t.children[0] = leaf("a");
  t.children[1] = leaf("b");
  t.children[1].children.length(1);
  t.children[1].children[0] = leaf("b1");
  return t;
}

static void run(TypesEcho_ptr e) {
  {
    Prims p = prims(), r = e->echo_prims(p);
    CHECK("prims", r.s == p.s && r.us == p.us && r.l == p.l && r.ul == p.ul && r.ll == p.ll &&
                       r.ull == p.ull && r.f == p.f && r.d == p.d && r.ld == p.ld && r.b == p.b &&
                       r.o == p.o && r.c == p.c && r.wc == p.wc);
  }
  CHECK("point", eq(e->echo_point(point(5)), point(5)));
  {
    Points_var r = e->echo_points(points());
    CHECK("points", eq(r.in(), points()));
  }
  CHECK("nested", eq(e->echo_nested(nested()), nested()));
  {
    Texts_var r = e->echo_texts(texts());
    CHECK("texts", eq(r.in(), texts()));
    TextsAlias_var a = e->echo_texts_alias(texts());
    CHECK("texts alias", eq(a.in(), texts()));
  }
  {
    Grid g = {{1, 2, 3}, {4, 5, 6}};
    Grid_var r = e->echo_grid(g);
    bool same = true;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) same = same && r[i][j] == g[i][j];
    CHECK("grid", same);
  }
  {
    Pair p;
    p[0] = pt(7, 8, 9.0);
    p[1] = pt(-7, -8, -9.0);
    Pair_var r = e->echo_pair(p);
    CHECK("pair", eq(r[0], p[0]) && eq(r[1], p[1]));
  }
  {
    Names n;
    n[0] = CORBA::string_dup("alpha");
    n[1] = CORBA::string_dup("beta");
    n[2] = CORBA::string_dup("");
    Names_var r = e->echo_names(n);
    CHECK("names", eq(r[0], "alpha") && eq(r[1], "beta") && eq(r[2], ""));
  }
  {
    Price p = CORBA::Fixed("-123.45");
    CHECK("price", e->echo_price(p) == p);
  }
  {
    PointsSeqSeq s;
    s.length(3);
    s[0].length(1);
    s[0][0] = point(0);
    s[2] = points();
    PointsSeqSeq_var r = e->echo_points_seq_seq(s);
    CHECK("points seq seq", r->length() == 3 && eq(r[0], s[0]) && r[1].length() == 0 &&
                                eq(r[2], s[2]));
  }
  CHECK("color red", e->echo_color(RED) == RED);
  CHECK("color green", e->echo_color(GREEN) == GREEN);
  CHECK("color blue", e->echo_color(BLUE) == BLUE);
  {
    ByLong u[4];
    u[0].text(CORBA::string_dup("text"));
    u[1].number(2.5);
    u[1]._d(3);
    u[2].where(point(4));
    u[3].raw(7);
    u[3]._d(42);
    for (int i = 0; i < 4; ++i) {
      ByLong_var r = e->echo_by_long(u[i]);
      CHECK("by_long " << i, eq(r.in(), u[i]));
    }
  }
  {
    ByEnum g, b;
    g.g(CORBA::string_dup("green"));
    ByEnum::_b_seq bs;
    bs.length(3);
    bs[0] = 1; bs[1] = 2; bs[2] = 3;
    b.b(bs);
    ByEnum_var rg = e->echo_by_enum(g), rb = e->echo_by_enum(b);
    CHECK("by_enum green", rg->_d() == GREEN && eq(rg->g(), "green"));
    CHECK("by_enum blue", rb->_d() == BLUE && seq_eq(rb->b(), bs));
  }
  {
    ByChar b, a;
    b.b(nested());
    a.a(-5);
    ByChar rb = e->echo_by_char(b), ra = e->echo_by_char(a);
    CHECK("by_char b", rb._d() == 'b' && eq(rb.b(), nested()));
    CHECK("by_char a", ra._d() == 'a' && ra.a() == -5);
  }
  {
    ByBool y, n;
    y.yes(CORBA::string_dup("yes"));
    n.no(-1);
    ByBool_var ry = e->echo_by_bool(y), rn = e->echo_by_bool(n);
    CHECK("by_bool true", ry->_d() == true && eq(ry->yes(), "yes"));
    CHECK("by_bool false", rn->_d() == false && rn->no() == -1);
  }
  {
    Unions u;
    u.length(3);
    u[0].text(CORBA::string_dup("x"));
    u[1].number(-1.0);
    u[1]._d(2);
    u[2].raw(9);
    u[2]._d(-100);
    Unions_var r = e->echo_unions(u);
    CHECK("unions", r->length() == 3 && eq(r[0], u[0]) && eq(r[1], u[1]) && eq(r[2], u[2]));
  }
  {
    Tree_var r = e->echo_tree(tree());
    CHECK("tree", eq(r.in(), tree()));
  }
  {
    Holder h;
    h.name = CORBA::string_dup("holder");
    h.target = TypesEcho::_duplicate(e);
    h.any_obj = CORBA::Object::_nil();
    Holder_var r = e->echo_holder(h);
    CHECK("holder", eq(r->name, "holder") && r->target->_is_equivalent(e) &&
                        CORBA::is_nil(r->any_obj));
    // The reference that came back works.
    CHECK("holder target call", r->target->echo_color(BLUE) == BLUE);
  }
  {
    TypesEcho_var r = e->echo_ref(e);
    CHECK("ref", r->_is_equivalent(e));
    TypesEcho_var n = e->echo_ref(TypesEcho::_nil());
    CHECK("nil ref", CORBA::is_nil(n));
  }
  {
    CORBA::Any a;
    a <<= nested();
    CORBA::Any_var r = e->echo_any(a);
    const Nested* n = 0;
    CHECK("any", (r.in() >>= n) && eq(*n, nested()));
  }
  CHECK("long double", e->echo_long_double(-0.125L) == -0.125L);
  CHECK("wchar", e->echo_wchar(L'\u0416') == L'\u0416');
  {
    CORBA::WString_var r = e->echo_wstring(L"\u03c9mega");
    CHECK("wstring", weq(r.in(), L"\u03c9mega"));
  }
  {
    Tree t = tree();
    Points_var p;
    e->swap(t, p.out(), points());
    Tree want = tree();
    want.children.length(3);
    want.children[2] = leaf("swapped");
    Points rev;
    rev.length(3);
    for (CORBA::ULong i = 0; i < 3; ++i) rev[i] = point(2 - i);
    CHECK("swap inout", eq(t, want));
    CHECK("swap out", eq(p.in(), rev));
  }
  try {
    e->fail(17, "because", points());
    CHECK("fail raises", false);
  } catch (Failed& f) {
    CHECK("fail raises", f.code == 17 && eq(f.why, "because") && points_eq(f.where, points()));
  }
}

int main(int argc, char** argv) {
  try {
    CORBA::ORB_var orb = CORBA::ORB_init(argc, argv);
    if (argc < 2) {
      std::cerr << "usage: types_client IOR_FILE\n";
      return 2;
    }
    std::ifstream f(argv[1]);
    std::string ior;
    std::getline(f, ior);
    CORBA::Object_var obj = orb->string_to_object(ior.c_str());
    TypesEcho_var e = TypesEcho::_narrow(obj);
    if (CORBA::is_nil(e)) {
      std::cerr << "not a TypesEcho\n";
      return 1;
    }
    run(e);
    orb->destroy();
  } catch (CORBA::SystemException& ex) {
    std::cerr << "FAIL: system exception " << ex._name() << " minor 0x" << std::hex
              << ex.minor() << "\n";
    return 1;
  } catch (CORBA::Exception& ex) {
    std::cerr << "FAIL: exception " << ex._name() << "\n";
    return 1;
  }
  if (failures) {
    std::cerr << failures << " checks failed\n";
    return 1;
  }
  std::cout << "all checks passed\n";
  return 0;
}
