// omni_ami_client.cc -- omniORB AMI (callback model) client for bench.idl: an interop
// check of another ORB's server answering requests sent with sendc_ (CORBA 3 §22).
//
// usage: omni_ami_client IOR_FILE [-ORB... options]
//
// Sends, all before waiting: sendc_echo x50, sendc_ping, sendc_fail(0) (a reply),
// sendc_fail(7) (BenchError code 7), sendc_fail(-1) (the server is expected to raise
// NO_PERMISSION, minor 3), sendc_stop_timer. Each reply reaches an AMI_BenchHandler servant
// in this process; prints one line per check and exits 0 only if every reply arrived
// (within 10 s) and was right.

#include <omniORB4/CORBA.h>
#include "bench.hh"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>

namespace {

const int kEchoes = 50;
const int kExpected = kEchoes + 5;

std::mutex g_mu;
std::condition_variable g_cv;
int g_replies = 0;
int g_failures = 0;
int g_echoes_ok = 0;

void record(bool ok, const std::string& what) {
  std::lock_guard<std::mutex> lock(g_mu);
  ++g_replies;
  if (!ok) {
    ++g_failures;
    std::printf("FAIL %s\n", what.c_str());
  } else if (what != "echo") {
    std::printf("ok %s\n", what.c_str());
  }
  std::fflush(stdout);
  g_cv.notify_all();
}

class Handler : public POA_AMI_BenchHandler {
 public:
  void ping() override { record(true, "ping"); }
  void echo(const char* v) override {
    bool ok = std::string(v) == "hello AMI";
    if (ok) {
      std::lock_guard<std::mutex> lock(g_mu);
      ++g_echoes_ok;
    }
    record(ok, "echo");
  }
  void fail() override { record(true, "fail(0) replied"); }
  void fail_excep(Messaging::ExceptionHolder* h) override {
    try {
      h->raise_exception();
      record(false, "fail_excep: nothing raised");
    } catch (const BenchError& e) {
      record(e.code == 7, "fail(7) raised BenchError code " + std::to_string(e.code));
    } catch (const CORBA::NO_PERMISSION& e) {
      record(e.minor() == 3, "fail(-1) raised NO_PERMISSION minor " + std::to_string(e.minor()));
    } catch (const CORBA::Exception& e) {
      record(false, std::string("fail_excep: unexpected ") + e._name());
    }
  }
  void stop_timer(CORBA::ULongLong) override { record(true, "stop_timer"); }
  void send_octets() override { unexpected("send_octets"); }
  void send_shorts() override { unexpected("send_shorts"); }
  void send_longs() override { unexpected("send_longs"); }
  void send_doubles() override { unexpected("send_doubles"); }
  void send_chars() override { unexpected("send_chars"); }
  void send_structs() override { unexpected("send_structs"); }
  void start_timer() override { unexpected("start_timer"); }

  void ping_excep(Messaging::ExceptionHolder* h) override { excep("ping", h); }
  void echo_excep(Messaging::ExceptionHolder* h) override { excep("echo", h); }
  void stop_timer_excep(Messaging::ExceptionHolder* h) override { excep("stop_timer", h); }
  void send_octets_excep(Messaging::ExceptionHolder* h) override { excep("send_octets", h); }
  void send_shorts_excep(Messaging::ExceptionHolder* h) override { excep("send_shorts", h); }
  void send_longs_excep(Messaging::ExceptionHolder* h) override { excep("send_longs", h); }
  void send_doubles_excep(Messaging::ExceptionHolder* h) override { excep("send_doubles", h); }
  void send_chars_excep(Messaging::ExceptionHolder* h) override { excep("send_chars", h); }
  void send_structs_excep(Messaging::ExceptionHolder* h) override { excep("send_structs", h); }
  void start_timer_excep(Messaging::ExceptionHolder* h) override { excep("start_timer", h); }

 private:
  static void unexpected(const char* op) { record(false, std::string("unexpected reply to ") + op); }
  static void excep(const char* op, Messaging::ExceptionHolder* h) {
    try {
      h->raise_exception();
      record(false, std::string(op) + "_excep: nothing raised");
    } catch (const CORBA::Exception& e) {
      record(false, std::string(op) + "_excep: " + e._name());
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  CORBA::ORB_var orb = CORBA::ORB_init(argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: omni_ami_client IOR_FILE [-ORB... options]\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  std::string ior;
  std::getline(in, ior);
  int rc = 1;
  try {
    CORBA::Object_var root = orb->resolve_initial_references("RootPOA");
    PortableServer::POA_var poa = PortableServer::POA::_narrow(root);
    poa->the_POAManager()->activate();
    Handler* servant = new Handler;
    PortableServer::ObjectId_var id = poa->activate_object(servant);
    servant->_remove_ref();
    CORBA::Object_var href = poa->id_to_reference(id);
    AMI_BenchHandler_var handler = AMI_BenchHandler::_narrow(href);

    CORBA::Object_var obj = orb->string_to_object(ior.c_str());
    Bench_var bench = Bench::_narrow(obj);
    for (int i = 0; i < kEchoes; ++i) bench->sendc_echo(handler, "hello AMI");
    bench->sendc_ping(handler);
    bench->sendc_fail(handler, 0);
    bench->sendc_fail(handler, 7);
    bench->sendc_fail(handler, -1);
    bench->sendc_stop_timer(handler);

    std::unique_lock<std::mutex> lock(g_mu);
    bool all = g_cv.wait_for(lock, std::chrono::seconds(10), [] { return g_replies >= kExpected; });
    std::printf("%s %d/%d replies, %d echoes right\n", all ? "ok" : "FAIL", g_replies,
                kExpected, g_echoes_ok);
    rc = (all && g_failures == 0 && g_echoes_ok == kEchoes) ? 0 : 1;
    lock.unlock();
  } catch (const CORBA::Exception& e) {
    std::printf("FAIL exception %s\n", e._name());
  }
  orb->destroy();
  return rc;
}
