// omni_sc_peer.cc -- service contexts through omniORB's interceptor API (omniInterceptors),
// against Corbina's Portable Interceptors (crates/corbina/tests/interceptors_omniorb.rs).
//
// usage: omni_sc_peer server IORFILE [-ORB options]
//          Serves an ScProbe. A request carrying context 0x43420100 gets a reply carrying
//          context 0x43420200 whose data is "omni:" followed by the request's data.
//        omni_sc_peer client IORFILE [-ORB options]
//          Calls echo("hi") with context 0x43420100 = "from-omni"; prints
//          "reply-context <data>" (or "reply-context none") and the result.

#include <omniORB4/CORBA.h>
#include <omniORB4/omniInterceptors.h>
#include <omniORB4/internal/giopStream.h>
#include <omniORB4/internal/giopStrand.h>
#include <omniORB4/internal/GIOP_S.h>
#include "sc.hh"

using omni::omniInterceptors;

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

static const CORBA::ULong CTX_REQUEST = 0x43420100;
static const CORBA::ULong CTX_REPLY = 0x43420200;

static std::string octets(const IOP::ServiceContext& sc) {
  return std::string((const char*)sc.context_data.get_buffer(), sc.context_data.length());
}

static void set_octets(IOP::ServiceContext& sc, CORBA::ULong id, const std::string& s) {
  sc.context_id = id;
  sc.context_data.length(s.size());
  if (!s.empty()) std::memcpy(sc.context_data.get_buffer(), s.data(), s.size());
}

// One request at a time per thread (omniORB's thread per connection): the request's
// context waits here for its reply.
static thread_local std::string received;
static thread_local bool have_received = false;

static CORBA::Boolean server_receive(omniInterceptors::serverReceiveRequest_T::info_T& info) {
  have_received = false;
  IOP::ServiceContextList& l = info.giop_s.service_contexts();
  for (CORBA::ULong i = 0; i < l.length(); ++i) {
    if (l[i].context_id == CTX_REQUEST) {
      received = octets(l[i]);
      have_received = true;
    }
  }
  return 1;
}

static CORBA::Boolean server_send_reply(omniInterceptors::serverSendReply_T::info_T& info) {
  if (!have_received) return 1;
  IOP::ServiceContextList& l = info.giop_s.service_contexts();
  CORBA::ULong n = l.length();
  l.length(n + 1);
  set_octets(l[n], CTX_REPLY, "omni:" + received);
  have_received = false;
  return 1;
}

static CORBA::Boolean client_send(omniInterceptors::clientSendRequest_T::info_T& info) {
  CORBA::ULong n = info.service_contexts.length();
  info.service_contexts.length(n + 1);
  set_octets(info.service_contexts[n], CTX_REQUEST, "from-omni");
  return 1;
}

static std::string reply_context = "none";

static CORBA::Boolean client_receive(omniInterceptors::clientReceiveReply_T::info_T& info) {
  for (CORBA::ULong i = 0; i < info.service_contexts.length(); ++i) {
    if (info.service_contexts[i].context_id == CTX_REPLY)
      reply_context = octets(info.service_contexts[i]);
  }
  return 1;
}

class ScProbeImpl : public POA_ScProbe {
 public:
  char* echo(const char* s) override { return CORBA::string_dup(s); }
};

int main(int argc, char** argv) {
  CORBA::ORB_var orb = CORBA::ORB_init(argc, argv);
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s server|client IORFILE [-ORB options]\n", argv[0]);
    return 2;
  }
  std::string mode = argv[1];
  omniInterceptors* ints = omniORB::getInterceptors();
  if (mode == "server") {
    ints->serverReceiveRequest.add(server_receive);
    ints->serverSendReply.add(server_send_reply);
    CORBA::Object_var o = orb->resolve_initial_references("RootPOA");
    PortableServer::POA_var poa = PortableServer::POA::_narrow(o);
    ScProbeImpl* impl = new ScProbeImpl;
    PortableServer::ObjectId_var id = poa->activate_object(impl);
    CORBA::Object_var ref = poa->id_to_reference(id);
    CORBA::String_var s = orb->object_to_string(ref);
    {
      std::string tmp = std::string(argv[2]) + ".tmp";
      std::ofstream f(tmp.c_str());
      f << s.in() << "\n";
      f.close();
      std::rename(tmp.c_str(), argv[2]);
    }
    PortableServer::POAManager_var pm = poa->the_POAManager();
    pm->activate();
    orb->run();
    return 0;
  }
  if (mode == "client") {
    ints->clientSendRequest.add(client_send);
    ints->clientReceiveReply.add(client_receive);
    std::ifstream f(argv[2]);
    std::string ior;
    std::getline(f, ior);
    CORBA::Object_var obj = orb->string_to_object(ior.c_str());
    ScProbe_var p = ScProbe::_unchecked_narrow(obj);
    CORBA::String_var r = p->echo("hi");
    std::printf("reply-context %s\nresult %s\n", reply_context.c_str(), r.in());
    orb->destroy();
    return 0;
  }
  std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return 2;
}
