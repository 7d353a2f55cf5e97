// omni_bidir_server.cc -- omniORB server of bidir.idl's Registrar.
//
// usage: omni_bidir_server IORFILE [LIFETIME_S] [--poa-policy both|normal]
//                          [-ORB... options]
//
// Activates one Registrar in a child POA "bidir" created with
// BiDirPolicy::BidirectionalPolicy = BOTH (or NORMAL with --poa-policy
// normal, to show that the policy matters) and writes its IOR to IORFILE
// (through IORFILE.tmp and a rename).  Exits by itself after LIFETIME_S
// seconds (default 900).
//
// omniORB accepts a client's bidirectional offer only when all three hold
// (giopBiDir.cc:getBiDirServiceContext, omniObjRef.cc:_unMarshal):
//   -ORBacceptBiDirectionalGIOP 1
//   -ORBserverTransportRule "* unix,ssl,tcp,bidir"   (the "bidir" action)
//   the target object's POA has BidirectionalPolicy BOTH
// Nothing is added to the -ORB options: pass them (see peers/README.md).

#include <omniORB4/CORBA.h>
#include "bidir.hh"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <unistd.h>

namespace {

long call_back_on(BidirTest::Callback_ptr cb, CORBA::Long n) {
  CORBA::Long sum = 0;
  for (CORBA::Long i = 1; i <= n; ++i) sum += cb->notify(i);
  return sum;
}

class RegistrarImpl : public POA_BidirTest::Registrar {
 public:
  CORBA::Long ping() override { return 1; }

  CORBA::Long call_back(BidirTest::Callback_ptr cb, CORBA::Long n) override {
    return call_back_on(cb, n);
  }

  void register_cb(BidirTest::Callback_ptr cb) override {
    std::lock_guard<std::mutex> g(mu_);
    stored_ = BidirTest::Callback::_duplicate(cb);
  }

  CORBA::Long notify_registered(CORBA::Long n) override {
    BidirTest::Callback_var cb = stored();
    return call_back_on(cb, n);
  }

  CORBA::Long ticks_seen() override { return ticks_.load(); }

  void call_back_later(BidirTest::Callback_ptr cb, CORBA::Long n,
                       CORBA::Long delay_ms) override {
    BidirTest::Callback_ptr mine = BidirTest::Callback::_duplicate(cb);
    std::thread([mine, n, delay_ms] {
      BidirTest::Callback_var cb = mine;  // released when the thread ends
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      try {
        for (CORBA::Long i = 1; i <= n; ++i) {
          CORBA::Long r = cb->notify(i);
          if (r != 2 * i)
            std::fprintf(stderr, "omni_bidir_server: later notify(%ld) = %ld\n",
                         static_cast<long>(i), static_cast<long>(r));
        }
      } catch (CORBA::SystemException& ex) {
        std::fprintf(stderr,
                     "omni_bidir_server: call_back_later: CORBA::%s (minor 0x%lx)\n",
                     ex._name(), static_cast<unsigned long>(ex.minor()));
      }
    }).detach();
  }

  void tick(CORBA::Long) override { ticks_.fetch_add(1); }

  void tick_registered(CORBA::Long n) override {
    BidirTest::Callback_var cb = stored();
    for (CORBA::Long i = 1; i <= n; ++i) cb->tick(i);
  }

 private:
  BidirTest::Callback_ptr stored() {
    std::lock_guard<std::mutex> g(mu_);
    if (CORBA::is_nil(stored_))
      throw CORBA::BAD_INV_ORDER(0, CORBA::COMPLETED_NO);
    return BidirTest::Callback::_duplicate(stored_);
  }

  std::mutex mu_;
  BidirTest::Callback_var stored_;
  std::atomic<long> ticks_{0};
};

}  // namespace

int main(int argc, char** argv) {
  try {
    CORBA::ORB_var orb = CORBA::ORB_init(argc, argv);  // strips -ORB options
    std::string iorfile;
    long lifetime = 900;
    CORBA::UShort policy = BiDirPolicy::BOTH;
    int positional = 0;
    for (int i = 1; i < argc; ++i) {
      if (std::strcmp(argv[i], "--poa-policy") == 0 && i + 1 < argc) {
        const char* v = argv[++i];
        if (std::strcmp(v, "both") == 0) {
          policy = BiDirPolicy::BOTH;
        } else if (std::strcmp(v, "normal") == 0) {
          policy = BiDirPolicy::NORMAL;
        } else {
          std::fprintf(stderr, "--poa-policy takes both or normal\n");
          return 2;
        }
      } else if (positional == 0) {
        iorfile = argv[i];
        ++positional;
      } else if (positional == 1) {
        lifetime = std::strtol(argv[i], nullptr, 10);
        ++positional;
      } else {
        std::fprintf(stderr, "unexpected argument %s\n", argv[i]);
        return 2;
      }
    }
    if (iorfile.empty()) {
      std::fprintf(stderr,
                   "usage: %s IORFILE [LIFETIME_S] [--poa-policy both|normal] "
                   "[-ORB options]\n",
                   argv[0]);
      return 2;
    }
    if (lifetime > 0) alarm(static_cast<unsigned>(lifetime));  // default action: exit

    CORBA::Object_var obj = orb->resolve_initial_references("RootPOA");
    PortableServer::POA_var root = PortableServer::POA::_narrow(obj);
    PortableServer::POAManager_var pman = root->the_POAManager();

    CORBA::PolicyList pl;
    pl.length(1);
    CORBA::Any a;
    a <<= policy;
    pl[0] = orb->create_policy(BiDirPolicy::BIDIRECTIONAL_POLICY_TYPE, a);
    PortableServer::POA_var poa = root->create_POA("bidir", pman, pl);

    RegistrarImpl* servant = new RegistrarImpl;
    PortableServer::ObjectId_var oid = poa->activate_object(servant);
    servant->_remove_ref();  // the POA holds the reference now
    CORBA::Object_var ref = poa->id_to_reference(oid);
    CORBA::String_var ior = orb->object_to_string(ref);
    pman->activate();

    const std::string tmp = iorfile + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (!f) {
      std::perror(tmp.c_str());
      return 1;
    }
    std::fprintf(f, "%s\n", static_cast<const char*>(ior));
    if (std::fclose(f) != 0 || std::rename(tmp.c_str(), iorfile.c_str()) != 0) {
      std::perror("writing IOR file");
      return 1;
    }
    std::fprintf(stderr, "omni_bidir_server: Registrar (POA policy %s) in %s, pid %d\n",
                 policy == BiDirPolicy::BOTH ? "BOTH" : "NORMAL", iorfile.c_str(),
                 static_cast<int>(getpid()));
    orb->run();
    orb->destroy();
  } catch (CORBA::SystemException& ex) {
    std::fprintf(stderr, "omni_bidir_server: CORBA::%s (minor 0x%lx)\n", ex._name(),
                 static_cast<unsigned long>(ex.minor()));
    return 1;
  } catch (CORBA::Exception& ex) {
    std::fprintf(stderr, "omni_bidir_server: CORBA::%s\n", ex._name());
    return 1;
  }
  return 0;
}
