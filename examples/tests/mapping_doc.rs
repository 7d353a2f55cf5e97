//! `docs/mapping.md`'s code compiles against the generator's output: `build.rs` generates
//! Rust from the document's IDL blocks (`mapping_doc.rs`) and writes each of its Rust blocks
//! as a module using it (`mapping_doc_blocks.rs`); this file includes both. The tests check
//! that the names the document promises are the generated ones and that its examples run.

#[allow(dead_code)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/mapping_doc.rs"));
}
use generated::*;

mod blocks {
    use super::*;
    include!(concat!(env!("OUT_DIR"), "/mapping_doc_blocks.rs"));
}

use std::sync::Arc;

// The names table's example and the operation signatures' example, at least: a build
// that lost the blocks fails here.
const _: () = assert!(blocks::RUST_BLOCKS >= 2);

#[test]
fn names_are_mapped_as_documented() {
    assert_eq!(
        my_module::Iface5::REPOSITORY_ID,
        "IDL:My_Module/Iface_5:1.0"
    );
    assert_eq!(my_module::Shade::REPOSITORY_ID, "IDL:My_Module/Shade:1.0");
    assert_eq!(
        blocks::block_1::shades(),
        [my_module::Shade::NotFound, my_module::Shade::LightBlue]
    );
}

#[test]
fn operation_signature_example_runs() {
    // The document's servant, called through its proxy (a collocated call: no sockets).
    let orb = corbina::Orb::with_config(corbina::OrbConfig::default());
    let poa = orb.root_poa();
    let skeleton = m::BenchSkeleton::new(blocks::block_2::MyBench);
    let id = poa.activate_object(Arc::new(skeleton)).unwrap();
    poa.the_poa_manager().activate().unwrap();
    let proxy = m::Bench::unchecked_narrow(&poa.id_to_reference(&id).unwrap());
    assert_eq!(blocks::block_2::call(&proxy).unwrap(), "HELLO 2 42");
    let mut b = 0;
    match proxy.op("", &mut b) {
        Err(m::bench::OpError::BenchError(e)) => {
            assert_eq!((e.code, e.reason.as_str()), (1, "empty"))
        }
        other => panic!("expected BenchError, got {other:?}"),
    }
    orb.destroy();
}

#[test]
fn async_proxy_example_runs() {
    let orb = corbina::Orb::with_config(corbina::OrbConfig::default());
    let poa = orb.root_poa();
    let skeleton = m::BenchSkeleton::new(blocks::block_2::MyBench);
    let id = poa.activate_object(Arc::new(skeleton)).unwrap();
    poa.the_poa_manager().activate().unwrap();
    let proxy = m::Bench::unchecked_narrow(&poa.id_to_reference(&id).unwrap());
    let call = blocks::block_3::call_async(&proxy);
    assert_eq!(block_on(call).unwrap(), "HELLO 2 42");
    orb.destroy();
}

#[test]
fn ami_callback_example_runs() {
    let orb = corbina::Orb::with_config(corbina::OrbConfig::default());
    let poa = orb.root_poa();
    let id = poa
        .activate_object(Arc::new(m::BenchSkeleton::new(blocks::block_2::MyBench)))
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let hid = poa
        .activate_object(Arc::new(m::AmiBenchHandlerSkeleton::new(
            blocks::block_4::Replies(tx),
        )))
        .unwrap();
    poa.the_poa_manager().activate().unwrap();
    let proxy = m::Bench::unchecked_narrow(&poa.id_to_reference(&id).unwrap());
    let handler = m::AmiBenchHandler::unchecked_narrow(&poa.id_to_reference(&hid).unwrap());
    blocks::block_4::call(&proxy, &handler);
    let wait = std::time::Duration::from_secs(10);
    assert_eq!(rx.recv_timeout(wait).unwrap().unwrap(), "HELLO 2 42");
    // The user exception reaches op_excep, and raise_exception gives it back typed.
    proxy.sendc_op(Some(&handler), "", 0);
    match rx.recv_timeout(wait).unwrap() {
        Err(m::bench::OpError::BenchError(e)) => assert_eq!(e.code, 1),
        other => panic!("expected BenchError, got {other:?}"),
    }
    orb.destroy();
}

#[test]
fn ami_polling_example_runs() {
    let orb = corbina::Orb::with_config(corbina::OrbConfig::default());
    let poa = orb.root_poa();
    let id = poa
        .activate_object(Arc::new(m::BenchSkeleton::new(blocks::block_2::MyBench)))
        .unwrap();
    poa.the_poa_manager().activate().unwrap();
    let obj = poa.id_to_reference(&id).unwrap().without_collocation();
    let proxy = m::Bench::unchecked_narrow(&obj);
    assert_eq!(blocks::block_5::poll(&proxy).unwrap(), "HELLO 2 42");
    let first = blocks::block_5::first_of(&proxy).unwrap();
    assert!(first == "X" || first == "Y", "{first}");
    match proxy.sendp_op("", 0).op(10_000) {
        Err(m::bench::OpError::BenchError(e)) => assert_eq!(e.code, 1),
        other => panic!("expected BenchError, got {other:?}"),
    }
    orb.destroy();
}

#[test]
fn amh_servant_example_runs() {
    let orb = corbina::Orb::with_config(corbina::OrbConfig::default());
    let poa = orb.root_poa();
    let (tx, rx) = std::sync::mpsc::channel();
    let servant = blocks::block_6::Parking(std::sync::Mutex::new(tx));
    let id = poa
        .activate_object(Arc::new(m::AmhBenchSkeleton::new(servant)))
        .unwrap();
    poa.the_poa_manager().activate().unwrap();
    blocks::block_6::answer_parked(rx);
    // An AMH servant is reached over IIOP (a direct call cannot defer its reply).
    let obj = poa.id_to_reference(&id).unwrap().without_collocation();
    let proxy = m::Bench::unchecked_narrow(&obj);
    assert_eq!(blocks::block_2::call(&proxy).unwrap(), "HELLO 2 42");
    let mut b = 0;
    match proxy.op("", &mut b) {
        Err(m::bench::OpError::BenchError(e)) => assert_eq!(e.code, 1),
        other => panic!("expected BenchError, got {other:?}"),
    }
    orb.destroy();
}

/// The least executor there is (the futures need none in particular): park until woken.
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let std::task::Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::park();
    }
}

#[test]
fn valuetype_example_runs() {
    use corbina::cdr::{from_bytes, to_bytes, ByteOrder, CdrContext};
    use corbina::valuetype::ValueRef;
    let orb = corbina::Orb::with_config(corbina::OrbConfig::default());
    let c = blocks::block_8::canvas(&orb);
    let bytes = to_bytes(&c, CdrContext::GIOP_1_2).unwrap();
    let back: ValueRef<gallery::Canvas> =
        from_bytes(&bytes, ByteOrder::NATIVE, CdrContext::GIOP_1_2).unwrap();
    {
        let g = back.lock().unwrap();
        assert_eq!(g.figures[0], g.figures[1], "one square, sent once");
        assert_eq!(blocks::block_8::area(&g.figures[0]), Some(9.0));
        assert!(g.extra.ptr_eq(&back.clone().into()), "the cycle closes");
    }
    // Break the cycles so the graphs are freed.
    back.lock().unwrap().extra = corbina::ValueBase::null();
    c.lock().unwrap().extra = corbina::ValueBase::null();
    orb.destroy();
}

#[test]
fn derived_value_as_its_base_example_runs() {
    assert_eq!(blocks::block_7::disc_as_square(1.5), (3.0, Some(1.5)));
}

#[test]
fn value_in_an_any_example_runs() {
    assert_eq!(blocks::block_9::square_in_an_any(2.5), Some(2.5));
}

#[test]
fn abstract_interface_example_runs() {
    struct Warden;
    impl zoo::AnimalServant for Warden {
        fn speak(&self) -> Result<String, corbina::SystemException> {
            Ok("hello".into())
        }
    }
    impl zoo::KeeperServant for Warden {
        fn feed(&self) -> Result<(), corbina::SystemException> {
            Ok(())
        }
    }
    struct Shelter;
    impl zoo::ShelterServant for Shelter {
        fn adopt(&self, a: &zoo::Animal) -> Result<zoo::Animal, corbina::SystemException> {
            Ok(a.clone())
        }
    }
    let orb = corbina::Orb::with_config(corbina::OrbConfig::default());
    let poa = orb.root_poa();
    let k = poa
        .activate_object(Arc::new(zoo::KeeperSkeleton::new(Warden)))
        .unwrap();
    let s = poa
        .activate_object(Arc::new(zoo::ShelterSkeleton::new(Shelter)))
        .unwrap();
    poa.the_poa_manager().activate().unwrap();
    let remote = |id| poa.id_to_reference(id).unwrap().without_collocation();
    let keeper = zoo::Keeper::unchecked_narrow(&remote(&k));
    let shelter = zoo::Shelter::unchecked_narrow(&remote(&s));
    // Each form through a remote call and back, then its operation.
    let said: Vec<String> = blocks::block_11::animals(keeper)
        .iter()
        .map(|a| blocks::block_11::describe(&shelter.adopt(a).unwrap()))
        .collect();
    assert_eq!(
        said,
        [
            "a keeper says Ok(\"hello\")",
            "a dog says Ok(\"Rex: woof\")",
            "nobody"
        ]
    );
    orb.destroy();
}
