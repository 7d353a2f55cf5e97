//! Local interfaces (docs/mapping.md, "Local interfaces"): a Rust trait the application
//! implements, with no proxy, stub or skeleton; references are `LocalRef<dyn L>`.

use crate::context::Gen;
use crate::interfaces::methods_of;
use corbina_idl::model::{Definition, DefinitionKind, Interface};

const LOCAL: &str = "::corbina::local";

impl Gen<'_> {
    pub fn gen_local_interface(&mut self, def: &Definition, i: &Interface) {
        let methods = methods_of(&self.names, def, i);
        let mut ok = true;
        for m in &methods {
            ok &= self.check_method(m, &def.scoped_name);
        }
        if !ok {
            return;
        }
        let name = self.names.item(&def.scoped_name);
        let id = &def.repository_id;
        // A local interface may inherit from unconstrained ones: their servant traits hold
        // the operations.
        let supers: Vec<String> = i
            .bases
            .iter()
            .map(|b| {
                let mut p = self.type_path(b);
                if !self.is_local(b) {
                    p.push_str("Servant");
                }
                p
            })
            .collect();
        let supers = if supers.is_empty() {
            "Send + Sync + 'static".into()
        } else {
            supers.join(" + ")
        };
        self.out.line(format!(
            "/// IDL local interface `{}` (`{id}`): implemented by the application and called",
            def.scoped_name
        ));
        self.out.line(format!(
            "/// directly; a reference is `{LOCAL}::LocalRef<dyn {name}>`."
        ));
        if methods.is_empty() {
            self.out.line(format!("pub trait {name}: {supers} {{}}"));
        } else {
            self.out.open(format!("pub trait {name}: {supers}"));
            for (k, m) in methods.iter().enumerate() {
                if k > 0 {
                    self.out.blank();
                }
                self.out.line(format!("/// IDL `{}`.", m.wire));
                self.out.line(format!("{};", self.signature(m, &m.rust)));
            }
            self.out.close();
        }
        self.out.blank();
        self.out
            .open(format!("impl {LOCAL}::LocalInterface for dyn {name}"));
        self.out
            .line(format!("const REPOSITORY_ID: &'static str = {id:?};"));
        self.out.close();
        self.out.blank();
        self.out.open(format!("impl dyn {name}"));
        self.out.line("/// The repository id.");
        self.out
            .line(format!("pub const REPOSITORY_ID: &'static str = {id:?};"));
        self.out.blank();
        self.gen_type_code_fn(def);
        self.out.blank();
        self.out.line(
            "/// The object as the ORB holds it (`Orb::register_initial_reference`), narrowable",
        );
        self.out.line("/// to this interface and each local base.");
        self.out.open(format!(
            "pub fn to_local_object(obj: {LOCAL}::LocalRef<Self>) -> {LOCAL}::LocalObject"
        ));
        let bases: Vec<String> = self
            .spec
            .all_bases(def)
            .into_iter()
            .filter(|b| matches!(&b.kind, DefinitionKind::Interface(bi) if bi.is_local))
            .map(|b| self.type_path(&b.scoped_name))
            .collect();
        let mut e = format!("{LOCAL}::LocalObject::new(obj.clone())");
        for b in &bases {
            e.push_str(&format!(
                "\n    .with_base({LOCAL}::LocalRef::new(obj.as_arc().clone() as ::std::sync::Arc<dyn {b}>))"
            ));
        }
        if bases.is_empty() {
            e = format!("{LOCAL}::LocalObject::new(obj)");
        }
        self.out.line(e);
        self.out.close();
        self.out.close();
    }
}
