//! Asynchronous Method Handling servants (TAO's AMH): for an interface `I`, the servant trait
//! `AMH_IServant` whose methods get a typed `AMH_IResponseHandler` to answer with later, from
//! any thread, and its skeleton `AMH_ISkeleton` (docs/mapping.md, *AMH servants*). Built on
//! `ServerRequest::defer_reply` and `corbina::ReplyHandle`.

use crate::context::Gen;
use crate::interfaces::Method;
use crate::marshal::{block, Val};
use crate::names::{fresh, suffixed, unique};
use corbina_idl::ast::ParamDir;
use corbina_idl::model::Definition;
use corbina_idl::Type;

const SYS: &str = "::corbina::SystemException";

impl Gen<'_> {
    pub(crate) fn amh_enabled(&self, def: &Definition) -> bool {
        if self.in_ami_handler {
            return false;
        }
        if self.options.amh {
            return true;
        }
        let scoped = def.scoped_name.to_string();
        let bare = scoped.trim_start_matches("::");
        self.options
            .amh_interfaces
            .iter()
            .any(|n| n.trim_start_matches("::") == bare)
    }

    /// The AMH servant trait, response handler and skeleton of interface `def`; `methods`
    /// are its operations and its bases'.
    pub(crate) fn gen_amh(&mut self, def: &Definition, methods: &[Method]) {
        // `AMH_<I>` → `Amh<I>`, from `I`'s Rust name (its family, `naming::FAMILY`).
        let amh = format!("Amh{}", self.names.item(&def.scoped_name));
        let rh = format!("{amh}ResponseHandler");
        self.out.blank();
        self.gen_amh_trait(def, &amh, &rh, methods);
        self.out.blank();
        self.gen_amh_response_handler(def, &rh, methods);
        self.out.blank();
        self.gen_amh_skeleton(def, &amh, &rh, methods);
    }

    /// The response handler's two methods (results, `_excep`) per twoway method, from the
    /// proxy's unique names and unique among themselves (`op_excep` may be an operation).
    fn amh_rh_methods(methods: &[Method]) -> Vec<(String, String)> {
        let twoways: Vec<&Method> = methods.iter().filter(|m| !m.oneway).collect();
        let names = unique(
            twoways
                .iter()
                .flat_map(|m| [m.proxy.clone(), suffixed(&m.proxy, "_excep")]),
            &[],
        );
        names
            .chunks(2)
            .map(|c| (c[0].clone(), c[1].clone()))
            .collect()
    }

    fn amh_rh_param(m: &Method) -> String {
        let taken: Vec<String> = m.params.iter().map(|p| p.1.clone()).collect();
        fresh("rh", &taken)
    }

    fn gen_amh_trait(&mut self, def: &Definition, amh: &str, rh: &str, methods: &[Method]) {
        self.out.line(format!(
            "/// An asynchronous servant for IDL interface `{}` (AMH): each twoway operation gets a",
            def.scoped_name
        ));
        self.out.line(format!(
            "/// [`{rh}`] and returns at once; the handler, `Send + 'static`, answers later from any"
        ));
        self.out.line(
            "/// thread. A handler dropped without an answer sends `INTERNAL`. Serve it with",
        );
        self.out.line(format!("/// [`{amh}Skeleton`]."));
        self.allow_camel(&format!("{amh}Servant"));
        self.out
            .open(format!("pub trait {amh}Servant: Send + Sync + 'static"));
        let rh_methods = Self::amh_rh_methods(methods);
        let mut twoway = 0;
        for (k, m) in methods.iter().enumerate() {
            if k > 0 {
                self.out.blank();
            }
            let mut args = vec!["&self".to_string()];
            if m.oneway {
                self.out
                    .line(format!("/// IDL `oneway {}` (no reply).", m.wire));
            } else {
                self.out.line(format!(
                    "/// IDL `{}`: answer through `{}` (`inout` values given here are the",
                    m.wire,
                    Self::amh_rh_param(m)
                ));
                self.out
                    .line("/// client's; the new ones go in the answer).");
                args.push(format!("{}: {rh}", Self::amh_rh_param(m)));
            }
            for (_, n, dir, ty) in &m.params {
                if *dir != ParamDir::Out {
                    args.push(format!("{n}: {}", self.in_type(ty)));
                }
            }
            let sig = format!("fn {}({})", m.proxy, args.join(", "));
            if !self.options.no_implement_defaults {
                self.out.line(format!("{sig};"));
                continue;
            }
            // As the ordinary servant trait's defaults: NO_IMPLEMENT as the answer.
            self.out.line("#[allow(unused_variables)]");
            self.out.open(sig);
            if !m.oneway {
                let excep = &rh_methods[twoway].1;
                twoway += 1;
                let into = if self.error_type(m) != SYS {
                    ".into()"
                } else {
                    ""
                };
                self.out.line(
                    "let e = ::corbina::SystemException::new(::corbina::SystemExceptionKind::NoImplement, ::corbina::error::minor::NO_IMPLEMENT_OPERATION);",
                );
                self.out.line(format!(
                    "let _ = {}.{excep}(e{into});",
                    Self::amh_rh_param(m),
                ));
            }
            self.out.close();
        }
        self.out.close();
    }

    fn gen_amh_response_handler(&mut self, def: &Definition, rh: &str, methods: &[Method]) {
        self.out.line(format!(
            "/// Answers one request of IDL interface `{}` dispatched to an AMH servant: with the",
            def.scoped_name
        ));
        self.out.line(
            "/// method named after the request's operation (its results) or that name with `_excep`",
        );
        self.out.line(
            "/// (an exception). Another operation's method sends `BAD_OPERATION` to the client.",
        );
        self.out.line("#[derive(Debug)]");
        self.allow_camel(rh);
        self.out
            .line(format!("pub struct {rh}(::corbina::ami::AmhResponse);"));
        self.out.blank();
        self.out.open(format!("impl {rh}"));
        let mut first = true;
        let rh_methods = Self::amh_rh_methods(methods);
        for (m, (name, excep)) in methods.iter().filter(|m| !m.oneway).zip(&rh_methods) {
            if !first {
                self.out.blank();
            }
            first = false;
            let taken: Vec<String> = m.params.iter().map(|p| p.1.clone()).collect();
            let h = fresh("handle", &taken);
            // Results: the return value, then inout and out values in declaration order.
            let mut results: Vec<(String, Type)> = Vec::new();
            if let Some(t) = &m.ret {
                results.push((fresh("ami_return_val", &taken), t.clone()));
            }
            for (_, n, dir, ty) in &m.params {
                if *dir != ParamDir::In {
                    results.push((n.clone(), ty.clone()));
                }
            }
            let mut args = vec!["self".to_string()];
            for (n, ty) in &results {
                args.push(format!("{n}: {}", self.in_type(ty)));
            }
            self.out.line(format!("/// The results of `{}`.", m.wire));
            self.out.open(format!(
                "pub fn {name}({}) -> ::core::result::Result<(), {SYS}>",
                args.join(", ")
            ));
            self.out
                .line(format!("let {h} = self.0.for_operation({:?})?;", m.wire));
            if results.is_empty() {
                self.out.line(format!("{h}.reply(|_| Ok(()))"));
            } else {
                let w = fresh("w", &taken);
                self.out.open(format!("{h}.reply(|{w}|"));
                let shared = self.shared_values(results.iter().map(|x| &x.1));
                let values = fresh("values", &taken);
                if shared {
                    self.out.line(format!(
                        "let mut {values} = ::corbina::valuetype::ValueOutput::new();"
                    ));
                }
                for (n, ty) in &results {
                    let v = if self.by_value(ty) {
                        Val::owned(n)
                    } else {
                        Val::borrowed(n)
                    };
                    if shared && self.contains_value(ty) {
                        self.write_scoped(ty, &v, &w, &values);
                    } else {
                        self.encode_value(ty, &v, &w, 0);
                    }
                }
                self.out.line("Ok(())");
                self.out.close_with(")");
            }
            self.out.close();
            self.out.blank();
            let et = self.error_type(m);
            let e = fresh("e", &taken);
            self.out
                .line(format!("/// An exception as the reply to `{}`.", m.wire));
            self.out.open(format!(
                "pub fn {excep}(self, {e}: {et}) -> ::core::result::Result<(), {SYS}>"
            ));
            self.out
                .line(format!("let {h} = self.0.for_operation({:?})?;", m.wire));
            if m.raises.is_empty() {
                self.out.line(format!("{h}.reply_system_exception({e})"));
            } else {
                self.out.open(format!("match {e}"));
                for v in &m.variants {
                    self.out.line(format!(
                        "{et}::{v}(x) => {h}.reply_user_exception(|w| ::corbina::cdr::CdrEncode::encode(&x, w)),"
                    ));
                }
                self.out
                    .line(format!("{et}::System(x) => {h}.reply_system_exception(x),"));
                self.out.close();
            }
            self.out.close();
        }
        self.out.close();
    }

    fn gen_amh_skeleton(&mut self, def: &Definition, amh: &str, rh: &str, methods: &[Method]) {
        let mut ids = vec![format!("{:?}", def.repository_id)];
        for b in self.spec.all_bases(def) {
            ids.push(format!("{:?}", b.repository_id));
        }
        ids.push("\"IDL:omg.org/CORBA/Object:1.0\"".into());
        self.out.line(format!(
            "/// Dispatches requests for IDL interface `{}` to an [`{amh}Servant`], deferring each",
            def.scoped_name
        ));
        self.out.line(
            "/// twoway reply to the servant's response handler. A collocated call waits on its thread",
        );
        self.out.line("/// for the response handler's answer.");
        self.allow_camel(&format!("{amh}Skeleton"));
        self.out.open(format!("pub struct {amh}Skeleton<_S>"));
        self.out.line("servant: ::std::sync::Arc<_S>,");
        self.out.close();
        self.out.blank();
        self.out
            .open(format!("impl<_S: {amh}Servant> {amh}Skeleton<_S>"));
        self.out.line("/// A skeleton serving `servant`.");
        self.out.open("pub fn new(servant: _S) -> Self");
        self.out
            .line("Self::from_arc(::std::sync::Arc::new(servant))");
        self.out.close();
        self.out.blank();
        self.out
            .line("/// A skeleton serving a servant that is shared with other code.");
        self.out
            .open("pub fn from_arc(servant: ::std::sync::Arc<_S>) -> Self");
        self.out.line("Self { servant }");
        self.out.close();
        self.out.blank();
        self.out.line("/// The servant.");
        self.out.open("pub fn servant(&self) -> &_S");
        self.out.line("&self.servant");
        self.out.close();
        self.out.close();
        self.out.blank();
        self.out.open(format!(
            "impl<_S: {amh}Servant> ::corbina::Servant for {amh}Skeleton<_S>"
        ));
        self.out.open("fn primary_interface(&self) -> &'static str");
        self.out.line(format!("{:?}", def.repository_id));
        self.out.close();
        self.out.blank();
        self.out.open("fn is_a(&self, repository_id: &str) -> bool");
        self.out.line(format!(
            "matches!(\n    repository_id,\n    {}\n)",
            ids.join("\n        | ")
        ));
        self.out.close();
        self.out.blank();
        self.out.open(format!("fn dispatch(&self, request: &mut ::corbina::ServerRequest<'_, '_>) -> ::core::result::Result<(), {SYS}>"));
        if !methods.is_empty() {
            self.out.open("match request.operation()");
            for m in methods {
                self.out.open(format!("{:?} =>", m.wire));
                self.gen_amh_dispatch_arm(m, rh);
                self.out.close();
            }
            self.out.open("_ =>");
        }
        self.out
            .open("if ::corbina::servant::dispatch_object_operation(self, request)?");
        self.out.line("Ok(())");
        self.out.close_with(" else {");
        self.out.indent_more();
        self.out.line("Err(::corbina::servant::bad_operation())");
        self.out.close();
        if !methods.is_empty() {
            self.out.close();
            self.out.close();
        }
        self.out.close();
        self.out.close();
    }

    fn gen_amh_dispatch_arm(&mut self, m: &Method, rh: &str) {
        let ins: Vec<&(String, String, ParamDir, Type)> =
            m.params.iter().filter(|p| p.2 != ParamDir::Out).collect();
        if !ins.is_empty() {
            self.out.line("let r = request.arguments();");
        }
        let arg = |n: &str| format!("arg_{}", n.trim_start_matches("r#"));
        let mut call_args = vec!["&self.servant".to_string()];
        if !m.oneway {
            call_args.push("rh".to_string());
        }
        let shared = self.shared_values(ins.iter().map(|p| &p.3));
        if shared {
            self.out
                .line("let mut values_ = ::corbina::valuetype::ValueInput::new();");
        }
        for (_, n, dir, ty) in &ins {
            // Octet sequences are borrowed from the receive buffer, as in the ordinary skeleton.
            let bytes = match self.resolve(ty) {
                Type::Sequence { elem, bound } if *dir == ParamDir::In => {
                    matches!(self.resolve(elem), Type::Octet | Type::Char).then_some(*bound)
                }
                _ => None,
            };
            let value = match bytes {
                Some(None) => "r.read_octet_seq()?".to_string(),
                Some(Some(b)) => block(&[
                    "let s = r.read_octet_seq()?;".into(),
                    crate::marshal::decode_bound_check("s.len()", Some(b), "r").unwrap_or_default(),
                    "s".into(),
                ]),
                None if shared && self.contains_value(ty) => self.read_scoped(ty, "r", "values_"),
                None => self.decode_value(ty, "r"),
            };
            self.out.line(format!("let {} = {value};", arg(n)));
            let a = arg(n);
            call_args.push(if bytes.is_some() || self.by_value(ty) {
                a
            } else if self.objref(ty).is_some() {
                format!("{a}.as_ref()")
            } else {
                format!("&{a}")
            });
        }
        self.out.line("request.arguments_done()?;");
        if !m.oneway {
            self.out.line(format!(
                "let rh = {rh}(::corbina::ami::AmhResponse::new(request.defer_reply()?, {:?}));",
                m.wire
            ));
        }
        self.out
            .line(format!("_S::{}({});", m.proxy, call_args.join(", ")));
        if m.oneway {
            self.out.line("request.reply(|_| Ok(()))");
        } else {
            self.out.line("Ok(())");
        }
    }
}
