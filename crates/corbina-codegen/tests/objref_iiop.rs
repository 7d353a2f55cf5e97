//! Object references end to end: generated stubs and skeletons (`tests/golden/objref.rs`)
//! served by one ORB over IIOP on 127.0.0.1 and called from a second ORB in this process,
//! passing references both ways, calling the ones that come back, and nil as `None`.

#[allow(dead_code)]
mod gen {
    include!("golden/objref.rs");
}

use corbina::config::Endpoint;
use corbina::poa::Poa;
use corbina::{ObjectRef, Orb, OrbConfig, SystemException};
use gen::refs::{
    registry, Entry, Item, ItemServant, ItemSkeleton, MaybeItem, NotFound, Registry,
    RegistryServant, RegistrySkeleton, SpecialItem, SpecialItemServant, SpecialItemSkeleton,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

struct ItemImpl {
    name: String,
    next: Mutex<Option<Item>>,
    /// The ORB that must have unmarshalled references this servant receives.
    orb: Orb,
}

impl ItemServant for ItemImpl {
    fn name(&self) -> Result<String, SystemException> {
        Ok(self.name.clone())
    }

    fn get_next(&self) -> Result<Option<Item>, SystemException> {
        Ok(self.next.lock().unwrap().clone())
    }

    fn set_next(&self, value: Option<&Item>) -> Result<(), SystemException> {
        if let Some(v) = value {
            assert_eq!(v.as_object().orb().as_ref(), Some(&self.orb));
        }
        *self.next.lock().unwrap() = value.cloned();
        Ok(())
    }
}

impl SpecialItemServant for ItemImpl {
    fn weight(&self) -> Result<i32, SystemException> {
        Ok(self.name.len() as i32)
    }
}

struct RegistryImpl {
    orb: Orb,
    poa: Poa,
    map: Mutex<HashMap<String, Option<ObjectRef>>>,
    made: Mutex<Vec<Option<Item>>>,
    entries: Mutex<Vec<Entry>>,
    fallback: Mutex<Option<ObjectRef>>,
    /// Set once the registry is activated.
    me: Arc<Mutex<Option<Registry>>>,
}

impl RegistryImpl {
    fn activate<S: corbina::Servant>(&self, servant: S) -> ObjectRef {
        let id = self.poa.activate_object(Arc::new(servant)).unwrap();
        self.poa.id_to_reference(&id).unwrap()
    }

    fn item(&self, name: &str) -> ItemImpl {
        ItemImpl {
            name: name.into(),
            next: Mutex::new(None),
            orb: self.orb.clone(),
        }
    }

    /// A reference received from the client: unmarshalled by the server's ORB.
    fn check(&self, obj: Option<&ObjectRef>) {
        if let Some(o) = obj {
            assert_eq!(o.orb().as_ref(), Some(&self.orb), "{o:?}");
        }
    }
}

impl RegistryServant for RegistryImpl {
    fn put(&self, name: &str, obj: Option<&ObjectRef>) -> Result<(), SystemException> {
        self.check(obj);
        self.map.lock().unwrap().insert(name.into(), obj.cloned());
        Ok(())
    }

    fn get(&self, name: &str) -> Result<Option<ObjectRef>, registry::GetError> {
        match self.map.lock().unwrap().get(name) {
            Some(o) => Ok(o.clone()),
            None => Err(NotFound {
                name: name.into(),
                last_seen: self.fallback.lock().unwrap().clone(),
            }
            .into()),
        }
    }

    fn make(&self, name: &str) -> Result<Option<Item>, SystemException> {
        let item = Item::unchecked_narrow(&self.activate(ItemSkeleton::new(self.item(name))));
        self.made.lock().unwrap().push(Some(item.clone()));
        Ok(Some(item))
    }

    fn make_special(
        &self,
        name: &str,
        _weight: i32,
    ) -> Result<Option<SpecialItem>, SystemException> {
        let obj = self.activate(SpecialItemSkeleton::new(self.item(name)));
        Ok(Some(SpecialItem::unchecked_narrow(&obj)))
    }

    fn echo_item(&self, i: Option<&Item>) -> Result<Option<Item>, SystemException> {
        self.check(i.map(Item::as_object));
        Ok(i.cloned())
    }

    fn swap(
        &self,
        a: &mut Option<ObjectRef>,
        b: &mut Option<Item>,
    ) -> Result<gen::refs::Obj, SystemException> {
        self.check(a.as_ref());
        self.check(b.as_ref().map(Item::as_object));
        let old_a = a.take();
        *a = b.take().map(|i| i.as_object().clone());
        *b = old_a.as_ref().map(Item::unchecked_narrow);
        Ok(old_a)
    }

    fn items(&self) -> Result<gen::refs::ItemSeq, SystemException> {
        let mut v = self.made.lock().unwrap().clone();
        v.push(None);
        Ok(v)
    }

    fn count_items(&self, items: &[Option<Item>]) -> Result<i32, SystemException> {
        // Calls every reference it was given (back over IIOP, to this same server).
        let mut n = 0;
        for i in items.iter().flatten() {
            self.check(Some(i.as_object()));
            assert!(!i.name()?.is_empty());
            n += 1;
        }
        Ok(n)
    }

    fn entries(&self) -> Result<gen::refs::EntrySeq, SystemException> {
        Ok(self.entries.lock().unwrap().clone())
    }

    fn put_entry(&self, e: &Entry) -> Result<(), SystemException> {
        self.check(e.obj.as_ref());
        self.check(e.item.as_ref().map(Item::as_object));
        self.entries.lock().unwrap().push(e.clone());
        Ok(())
    }

    fn maybe(&self, yes: bool) -> Result<MaybeItem, SystemException> {
        Ok(if yes {
            MaybeItem::Item(self.made.lock().unwrap().first().cloned().flatten())
        } else {
            MaybeItem::Why("asked for none".into())
        })
    }

    fn get_self_ref(&self) -> Result<Option<Registry>, SystemException> {
        Ok(self.me.lock().unwrap().clone())
    }

    fn get_fallback(&self) -> Result<Option<ObjectRef>, SystemException> {
        Ok(self.fallback.lock().unwrap().clone())
    }

    fn set_fallback(&self, value: Option<&ObjectRef>) -> Result<(), SystemException> {
        self.check(value);
        *self.fallback.lock().unwrap() = value.cloned();
        Ok(())
    }
}

#[test]
fn references_travel_both_ways_over_iiop() {
    let server = Orb::with_config(OrbConfig {
        endpoints: vec![Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }],
        ..Default::default()
    });
    // The server's upcalls unmarshal references with the ORB the server enters for each
    // request (not the process default: the client ORB below must not be used there).
    let poa = server.root_poa();
    let me = Arc::new(Mutex::new(None));
    let registry = RegistryImpl {
        orb: server.clone(),
        poa: poa.clone(),
        map: Mutex::default(),
        made: Mutex::default(),
        entries: Mutex::default(),
        fallback: Mutex::default(),
        me: me.clone(),
    };
    let id = poa
        .activate_object(Arc::new(RegistrySkeleton::new(registry)))
        .unwrap();
    let reg_ref = poa.id_to_reference(&id).unwrap();
    *me.lock().unwrap() = Some(Registry::unchecked_narrow(&reg_ref));
    poa.the_poa_manager().activate().unwrap();
    let ior = server.object_to_string(&reg_ref).unwrap();

    let client = Orb::with_config(OrbConfig::default());
    // References the client unmarshals from replies belong to the ORB of the reference called.
    let reg = Registry::narrow(&client.string_to_object(&ior).unwrap()).unwrap();
    let mine = |o: &ObjectRef| assert_eq!(o.orb().as_ref(), Some(&client), "{o:?}");

    // A returned reference is usable.
    let a = reg.make("alpha").unwrap().expect("non-nil");
    mine(a.as_object());
    assert_eq!(a.name().unwrap(), "alpha");

    // In as `Object`, back as `Object`, narrowed and called.
    reg.put("a", Some(a.as_object())).unwrap();
    let got = reg.get("a").unwrap().expect("non-nil");
    mine(&got);
    assert_eq!(&got, a.as_object());
    assert_eq!(Item::narrow(&got).unwrap().name().unwrap(), "alpha");

    // Nil travels as None, both ways.
    reg.put("nil", None).unwrap();
    assert_eq!(reg.get("nil").unwrap(), None);
    assert_eq!(reg.echo_item(None).unwrap(), None);
    assert_eq!(reg.echo_item(Some(&a)).unwrap(), Some(a.clone()));

    // A user exception with a reference member, nil and not.
    match reg.get("missing") {
        Err(registry::GetError::NotFound(e)) => assert_eq!(e.last_seen, None),
        other => panic!("{other:?}"),
    }
    reg.set_fallback(Some(a.as_object())).unwrap();
    assert_eq!(reg.get_fallback().unwrap().as_ref(), Some(a.as_object()));
    match reg.get("missing") {
        Err(registry::GetError::NotFound(e)) => {
            let seen = e.last_seen.expect("non-nil");
            mine(&seen);
            assert_eq!(Item::unchecked_narrow(&seen).name().unwrap(), "alpha");
        }
        other => panic!("{other:?}"),
    }

    // inout and out.
    let b = reg.make("beta").unwrap().unwrap();
    let mut x = Some(a.as_object().clone());
    let mut y = Some(b.clone());
    let c = reg.swap(&mut x, &mut y).unwrap();
    assert_eq!(x.as_ref(), Some(b.as_object()));
    assert_eq!(y.as_ref(), Some(&a));
    assert_eq!(c.as_ref(), Some(a.as_object()));
    assert_eq!(Item::unchecked_narrow(&x.unwrap()).name().unwrap(), "beta");
    let (mut x, mut y) = (None, None);
    assert_eq!(reg.swap(&mut x, &mut y).unwrap(), None);
    assert_eq!((x, y), (None, None));

    // Sequences (the server calls each reference it gets back over IIOP).
    let items = reg.items().unwrap();
    assert_eq!(items, vec![Some(a.clone()), Some(b.clone()), None]);
    assert_eq!(reg.count_items(&items).unwrap(), 2);
    assert_eq!(reg.count_items(&[]).unwrap(), 0);

    // Struct members and unions.
    let e = Entry {
        name: "e".into(),
        obj: Some(b.as_object().clone()),
        item: None,
    };
    reg.put_entry(&e).unwrap();
    reg.put_entry(&Entry::default()).unwrap();
    assert_eq!(reg.entries().unwrap(), vec![e, Entry::default()]);
    assert_eq!(reg.maybe(true).unwrap(), MaybeItem::Item(Some(a.clone())));
    assert!(matches!(reg.maybe(false).unwrap(), MaybeItem::Why(_)));

    // Attributes, a reference to the registry itself, and a derived interface.
    assert_eq!(reg.get_self_ref().unwrap(), Some(reg.clone()));
    a.set_next(Some(&b)).unwrap();
    assert_eq!(a.get_next().unwrap(), Some(b.clone()));
    a.set_next(None).unwrap();
    assert_eq!(a.get_next().unwrap(), None);
    let s = reg.make_special("gamma", 5).unwrap().unwrap();
    assert_eq!(s.weight().unwrap(), 5);
    let as_item = Item::from(s.clone());
    assert_eq!(
        reg.echo_item(Some(&as_item))
            .unwrap()
            .unwrap()
            .name()
            .unwrap(),
        "gamma"
    );

    client.destroy();
    server.destroy();
}
