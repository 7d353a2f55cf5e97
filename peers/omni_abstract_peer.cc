// omni_abstract_peer.cc -- abstract interfaces between omniORB's C++ mapping and another ORB
// (abstract.idl: crates/corbina/tests/abstract_omniorb.rs).
//
// usage: omni_abstract_peer --server IORFILE [-ORB options]
//          Serves an Abstracts::Registry; writes its IOR to IORFILE (whole, through a rename).
//        omni_abstract_peer --client IOR|IORFILE [-ORB options]
//          Calls every operation of a Registry with each form of Named (an object reference,
//          a value, nil) and checks the answers: prints one line per check ("ok NAME" or
//          "FAIL NAME: why"), then "passed P failed F"; exit 0 when every check passed.
//
// Both sides serve Persons (the object form) and build Pets (the value form, whose name()
// is its pet_name); Registry's semantics are in abstract.idl.

#include <omniORB4/CORBA.h>
#include "abstract.hh"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

using Abstracts::Named;
using Abstracts::Named_ptr;
using Abstracts::Named_var;

class PetImpl : public OBV_Abstracts::Pet, public virtual CORBA::DefaultValueRefCountBase {
 public:
  PetImpl() {}
  explicit PetImpl(const char* n) : OBV_Abstracts::Pet(n) {}
  char* name() override { return CORBA::string_dup(pet_name()); }
};

class PetFactory : public CORBA::ValueFactoryBase {
 public:
  CORBA::ValueBase* create_for_unmarshal() override { return new PetImpl; }
};

class PersonImpl : public POA_Abstracts::Person {
 public:
  explicit PersonImpl(const char* n) : name_(n) {}
  char* name() override { return CORBA::string_dup(name_.c_str()); }

 private:
  std::string name_;
};

static PortableServer::POA_var the_poa;

// A Person served here, as a Named.
static Named_ptr serve_person(const char* name) {
  PersonImpl* impl = new PersonImpl(name);
  PortableServer::ObjectId_var id = the_poa->activate_object(impl);
  impl->_remove_ref();
  CORBA::Object_var o = the_poa->id_to_reference(id);
  Abstracts::Person_var p = Abstracts::Person::_narrow(o);
  return Named::_duplicate(p.in());
}

static std::string form_of(Named_ptr n) {
  if (CORBA::is_nil(n)) return "nil";
  CORBA::String_var s = n->name();
  return std::string(n->_NP_to_value() ? "value:" : "object:") + s.in();
}

class RegistryImpl : public POA_Abstracts::Registry {
 public:
  char* describe(Named_ptr n) override { return CORBA::string_dup(form_of(n).c_str()); }
  Named_ptr echo(Named_ptr n) override { return Named::_duplicate(n); }
  Named_ptr make_person(const char* name) override { return serve_person(name); }
  Named_ptr make_pet(const char* name) override { return new PetImpl(name); }
  CORBA::Boolean same(Named_ptr a, Named_ptr b) override {
    return a && b && a->_NP_to_value() && a->_NP_to_value() == b->_NP_to_value();
  }
  void swap(Named_ptr& a, Abstracts::Named_out b) override {
    b = a;  // the inout's reference passes to the out
    a = new PetImpl("swapped");
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

static void client(Abstracts::Registry_ptr r) {
  Named_var olga = serve_person("Olga");
  Named_var rex = new PetImpl("Rex");
  // The callee calls name() back on our object, or on the value it received.
  run("describe(object)", [&] { return expect_eq(CORBA::String_var(r->describe(olga)).in(), "object:Olga"); });
  run("describe(value)", [&] { return expect_eq(CORBA::String_var(r->describe(rex)).in(), "value:Rex"); });
  run("describe(nil)", [&] { return expect_eq(CORBA::String_var(r->describe(Named::_nil())).in(), "nil"); });
  run("echo(object)", [&] {
    Named_var back = r->echo(olga);
    if (back->_NP_to_value()) return std::string("came back as a value");
    return expect_eq(form_of(back), "object:Olga");
  });
  run("echo(value)", [&] {
    Named_var back = r->echo(rex);
    if (!Abstracts::Pet::_downcast(back.in())) return std::string("not a Pet");
    return expect_eq(form_of(back), "value:Rex");
  });
  run("echo(nil)", [&] {
    Named_var back = r->echo(Named::_nil());
    return expect_eq(form_of(back), "nil");
  });
  run("make_person", [&] {
    Named_var p = r->make_person("Ann");
    return expect_eq(form_of(p), "object:Ann");
  });
  run("make_pet", [&] {
    Named_var p = r->make_pet("Kit");
    return expect_eq(form_of(p), "value:Kit");
  });
  run("same(value, value)", [&] { return r->same(rex, rex) ? "" : "false for one value passed twice"; });
  run("same(value, copy)", [&] {
    Named_var other = new PetImpl("Rex");
    return r->same(rex, other) ? "true for two values" : "";
  });
  run("swap(value)", [&] {
    Named_var a = new PetImpl("x");
    Named_var b;
    r->swap(a.inout(), b.out());
    return expect_eq(form_of(a) + " " + form_of(b), "value:swapped value:x");
  });
  run("swap(object)", [&] {
    Named_var a = Named::_duplicate(olga);
    Named_var b;
    r->swap(a.inout(), b.out());
    return expect_eq(form_of(a) + " " + form_of(b), "value:swapped object:Olga");
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
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "--server" || a == "--client") && i + 1 < argc) {
      mode = a;
      target = argv[++i];
    } else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (mode.empty()) {
    std::fprintf(stderr, "usage: %s --server IORFILE | --client IOR|IORFILE [-ORB options]\n",
                 argv[0]);
    return 2;
  }
  // The ORB holds a reference to the factory from here on.
  CORBA::ValueFactoryBase_var f = new PetFactory;
  orb->register_value_factory(Abstracts::Pet::_PD_repoId, f);
  CORBA::Object_var o = orb->resolve_initial_references("RootPOA");
  the_poa = PortableServer::POA::_narrow(o);
  PortableServer::POAManager_var pm = the_poa->the_POAManager();
  pm->activate();

  if (mode == "--server") {
    RegistryImpl* impl = new RegistryImpl;
    PortableServer::ObjectId_var id = the_poa->activate_object(impl);
    CORBA::Object_var ref = the_poa->id_to_reference(id);
    CORBA::String_var s = orb->object_to_string(ref);
    std::string tmp = target + ".tmp";
    {
      std::ofstream out(tmp.c_str());
      out << s.in() << "\n";
    }
    std::rename(tmp.c_str(), target.c_str());
    orb->run();
    return 0;
  }

  std::string ior = read_ior(target);
  int rc;
  try {
    CORBA::Object_var obj = orb->string_to_object(ior.c_str());
    Abstracts::Registry_var r = Abstracts::Registry::_narrow(obj);
    if (CORBA::is_nil(r)) {
      std::printf("FAIL narrow: not a Registry\n");
      return 1;
    }
    client(r);
    std::printf("passed %d failed %d\n", passed, failed);
    rc = failed == 0 ? 0 : 1;
  } catch (const CORBA::Exception& e) {
    std::printf("FAIL %s\n", e._name());
    rc = 1;
  }
  orb->destroy();
  return rc;
}
