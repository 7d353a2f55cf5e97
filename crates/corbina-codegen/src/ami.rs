//! CORBA AMI callbacks (CORBA 3 §22, implied IDL): for an interface `I`, the reply handler
//! interface `AMI_IHandler` (generated like any interface, so a handler can be local or
//! remote) and `sendc_<op>` methods on `I`'s proxy (docs/mapping.md, *AMI*).

use crate::context::Gen;
use crate::interfaces::Method;
use crate::names::{fresh, snake};
use corbina_idl::ast::ParamDir;
use corbina_idl::model::{
    Definition, DefinitionKind, Interface, NamedKind, Operation, Parameter, ScopedName,
};
use corbina_idl::Type;

const SYS: &str = "::corbina::SystemException";

/// `Messaging::ReplyHandler`, the base of every implied-IDL reply handler.
pub(crate) const REPLY_HANDLER_ID: &str = "IDL:omg.org/Messaging/ReplyHandler:1.0";

/// Whether `name` is `Messaging::ExceptionHolder`, which handlers' `_excep` operations take
/// and which maps to `corbina::ami::ExceptionHolder`.
pub fn is_exception_holder(name: &ScopedName) -> bool {
    name.0.len() == 2 && name.0[0] == "Messaging" && name.0[1] == "ExceptionHolder"
}

fn exception_holder() -> Type {
    Type::Named {
        name: ScopedName(vec!["Messaging".into(), "ExceptionHolder".into()]),
        kind: NamedKind::ValueType,
    }
}

/// The implied IDL name of a method's reply-handler operation: the operation's name, or
/// `get_<attr>`/`set_<attr>` for attribute accessors (`_get_<attr>` on the wire).
fn handler_op(m: &Method) -> String {
    m.wire.strip_prefix('_').unwrap_or(&m.wire).to_string()
}

impl Gen<'_> {
    pub(crate) fn ami_enabled(&self, def: &Definition) -> bool {
        if self.in_ami_handler {
            return false;
        }
        if self.options.ami {
            return true;
        }
        let scoped = def.scoped_name.to_string();
        let bare = scoped.trim_start_matches("::");
        self.options
            .ami_interfaces
            .iter()
            .any(|n| n.trim_start_matches("::") == bare)
    }

    /// The reply handler and the `sendc_` methods of interface `def` (proxy `name`).
    pub(crate) fn gen_ami(&mut self, def: &Definition, name: &str, methods: &[Method]) {
        let twoways: Vec<&Method> = methods.iter().filter(|m| !m.oneway).collect();
        let (hdef, hi) = self.handler_interface(def, &twoways);
        let handler = self.names.item(&hdef.scoped_name);
        // The handler's methods, two per twoway operation (reply, `_excep`), as its servant
        // trait names them.
        let hmethods: Vec<String> = crate::interfaces::methods_of(&self.names, &hdef, &hi)
            .into_iter()
            .map(|m| m.rust)
            .collect();
        for (op, rust) in hi.operations.iter().zip(&hmethods) {
            if *rust != snake(&op.name) {
                let idl = hdef.scoped_name.child(&op.name);
                let msg = crate::naming::renamed(
                    "the AMI reply handler method",
                    &idl,
                    rust,
                    &snake(&op.name),
                );
                self.warn(&op.loc, msg);
            }
        }
        self.out.blank();
        self.in_ami_handler = true;
        self.gen_interface(&hdef, &hi);
        self.in_ami_handler = false;
        // `sendc_<m>` and `sendp_<m>` after the proxy's methods, unique among them
        // (an IDL operation may be named `sendc_op`).
        let mut taken: Vec<String> = methods.iter().map(|m| m.proxy.clone()).collect();
        taken.extend(crate::naming::PROXY_RESERVED.iter().map(|s| s.to_string()));
        let mut claim = |g: &mut Self, prefix: &str, m: &Method| {
            let want = format!("{prefix}_{}", m.proxy.trim_start_matches("r#"));
            let n = fresh(&want, &taken);
            if n != want {
                g.warn(
                    &m.loc,
                    crate::naming::renamed(
                        &format!("AMI `{prefix}_` of"),
                        &m.owner.child(&m.wire),
                        &n,
                        &want,
                    ),
                );
            }
            taken.push(n.clone());
            n
        };
        let sendc: Vec<String> = twoways.iter().map(|m| claim(self, "sendc", m)).collect();
        let sendp: Vec<String> = twoways.iter().map(|m| claim(self, "sendp", m)).collect();
        self.out.blank();
        self.out.open(format!("impl {name}"));
        for (k, m) in twoways.iter().enumerate() {
            if k > 0 {
                self.out.blank();
            }
            let on = (&hmethods[2 * k], &hmethods[2 * k + 1]);
            self.gen_sendc(m, name, &sendc[k], &handler, on);
        }
        let (_, poller) = self.names.ami_poller(&def.scoped_name);
        for (m, n) in twoways.iter().zip(&sendp) {
            self.out.blank();
            self.gen_sendp(m, name, n, &poller);
        }
        self.out.close();
        self.gen_poller(def, &poller, &twoways);
    }

    /// The Rust type of a poll's success: the return value, then the `inout` and `out`
    /// values in declaration order (the implied IDL poller operation's `out` parameters).
    fn poll_ok_type(&self, m: &Method) -> String {
        let mut parts: Vec<String> = m.ret.iter().map(|t| self.rust_type(t)).collect();
        parts.extend(
            m.params
                .iter()
                .filter(|p| p.2 != ParamDir::In)
                .map(|p| self.rust_type(&p.3)),
        );
        match parts.len() {
            0 => "()".into(),
            1 => parts.remove(0),
            _ => format!("({})", parts.join(", ")),
        }
    }

    /// `AMI_<I>Poller` (docs/mapping.md, *AMI polling*): a local type, not a marshalled
    /// valuetype, that dereferences to `corbina::ami::Poller` and has, per twoway
    /// operation, a method taking its reply.
    fn gen_poller(&mut self, def: &Definition, poller: &str, twoways: &[&Method]) {
        self.out.blank();
        self.out.line(format!(
            "/// CORBA AMI poller for IDL interface `{}` (implied IDL `{}`): what the",
            def.scoped_name,
            self.names.ami_poller(&def.scoped_name).0
        ));
        self.out.line(
            "/// `sendp_` methods return. Its method for the operation takes the reply, waiting up to",
        );
        self.out.line(
            "/// `timeout` ms (0: no wait; `corbina::ami::WAIT_FOREVER`); `TIMEOUT` if it is not here",
        );
        self.out.line(
            "/// yet, `OBJECT_NOT_EXIST` once taken. `Messaging::Poller`'s operations come through",
        );
        self.out.line("/// `Deref` to [`::corbina::ami::Poller`].");
        self.out.line("#[derive(Clone, Debug, PartialEq, Eq)]");
        self.allow_camel(poller);
        self.out.open(format!("pub struct {poller}"));
        self.out.line("poller: ::corbina::ami::Poller,");
        self.out.close();
        self.out.blank();
        self.out.open(format!("impl {poller}"));
        for (k, m) in twoways.iter().enumerate() {
            if k > 0 {
                self.out.blank();
            }
            let op = handler_op(m);
            self.out.line(format!(
                "/// The reply of `{op}` (implied IDL `{op}(in unsigned long timeout, …)`)."
            ));
            self.out.open(format!(
                "pub fn {}(&self, timeout: u32) -> ::core::result::Result<{}, {}>",
                m.proxy,
                self.poll_ok_type(m),
                self.error_type(m)
            ));
            self.out.line(format!("self.poller.take({op:?}, timeout)"));
            self.out.close();
        }
        self.out.close();
        self.out.blank();
        self.out
            .open(format!("impl ::core::ops::Deref for {poller}"));
        self.out.line("type Target = ::corbina::ami::Poller;");
        self.out.blank();
        self.out.open("fn deref(&self) -> &::corbina::ami::Poller");
        self.out.line("&self.poller");
        self.out.close();
        self.out.close();
    }

    fn gen_sendp(&mut self, m: &Method, name: &str, sendp: &str, poller: &str) {
        let taken: Vec<String> = m.params.iter().map(|p| p.1.clone()).collect();
        let proxy = fresh("ami_proxy", &taken);
        let op = handler_op(m);
        let mut args = vec!["&self".to_string()];
        for (_, n, dir, ty) in &m.params {
            if *dir != ParamDir::Out {
                args.push(format!("{n}: {}", self.in_type(ty)));
            }
        }
        self.out.line(format!(
            "/// AMI `sendp_{op}`: sends the request; the returned poller's `{}` takes the reply.",
            m.proxy.trim_start_matches("r#"),
        ));
        self.out
            .open(format!("pub fn {sendp}({}) -> {poller}", args.join(", ")));
        self.out.line(format!(
            "let {proxy} = {name}Async {{ obj: self.obj.clone() }};"
        ));
        let mut call_args = Vec::new();
        let mut inouts = false;
        for (_, n, dir, ty) in &m.params {
            match dir {
                ParamDir::Out => {}
                ParamDir::In => {
                    let owned = self.owned_arg(ty, n);
                    if owned != *n {
                        self.out.line(format!("let {n} = {owned};"));
                    }
                    call_args.push(self.pass_in(ty, n));
                }
                ParamDir::InOut => {
                    inouts = true;
                    self.out
                        .line(format!("let mut {n} = {};", self.owned_arg(ty, n)));
                    call_args.push(format!("&mut {n}"));
                }
            }
        }
        self.out.open(poller);
        self.out.open(format!(
            "poller: ::corbina::ami::Poller::start(self.obj.clone(), {op:?}, async move"
        ));
        let call = format!("{proxy}.{}({}).await", m.rust, call_args.join(", "));
        if !inouts {
            self.out.line(call);
        } else {
            // The synchronous result (return value and outs) with the inouts put in their
            // places.
            let mut names: Vec<String> = Vec::new();
            let mut tuple: Vec<String> = Vec::new();
            if m.ret.is_some() {
                let n = fresh("ami_return_val", &taken);
                tuple.push(n.clone());
                names.push(n);
            }
            for (_, n, dir, _) in &m.params {
                match dir {
                    ParamDir::In => {}
                    ParamDir::InOut => tuple.push(n.clone()),
                    ParamDir::Out => {
                        let local = fresh(&format!("{}_out", n.trim_start_matches("r#")), &taken);
                        tuple.push(local.clone());
                        names.push(local);
                    }
                }
            }
            let pat = match names.len() {
                0 => "()".to_string(),
                1 => names[0].clone(),
                _ => format!("({})", names.join(", ")),
            };
            let value = match tuple.len() {
                1 => tuple[0].clone(),
                _ => format!("({})", tuple.join(", ")),
            };
            self.out.line(format!("{call}.map(|{pat}| {value})"));
        }
        self.out.close_with("),");
        self.out.close();
        self.out.close();
    }

    /// `AMI_<I>Handler`, in `I`'s scope: per twoway operation `op`, `void op(in <ret>
    /// ami_return_val, in <inout and out parameters>)` and `void op_excep(in
    /// Messaging::ExceptionHolder excep_holder)`; the same for attribute accessors.
    fn handler_interface(&self, def: &Definition, twoways: &[&Method]) -> (Definition, Interface) {
        let (hname, _) = self.names.ami_handler(&def.scoped_name);
        let mut scoped = def.scoped_name.clone();
        if let Some(last) = scoped.0.last_mut() {
            *last = hname.clone();
        }
        // IDL:<prefix/module>/I:1.0 → IDL:<prefix/module>/AMI_IHandler:1.0
        let id = &def.repository_id;
        let repository_id = match (id.rfind('/'), id.rfind(':')) {
            (Some(slash), Some(colon)) if slash < colon => {
                format!("{}/{hname}{}", &id[..slash], &id[colon..])
            }
            (None, Some(colon)) if id.starts_with("IDL:") => format!("IDL:{hname}{}", &id[colon..]),
            _ => format!("IDL:{hname}:1.0"),
        };
        let mut operations = Vec::new();
        for m in twoways {
            let op = handler_op(m);
            let mut params = Vec::new();
            if let Some(t) = &m.ret {
                params.push(Parameter {
                    name: "ami_return_val".into(),
                    direction: ParamDir::In,
                    ty: t.clone(),
                });
            }
            for (idl, _, dir, ty) in &m.params {
                if *dir != ParamDir::In {
                    params.push(Parameter {
                        name: idl.clone(),
                        direction: ParamDir::In,
                        ty: ty.clone(),
                    });
                }
            }
            for (n, params) in [
                (op.clone(), params),
                (
                    format!("{op}_excep"),
                    vec![Parameter {
                        name: "excep_holder".into(),
                        direction: ParamDir::In,
                        ty: exception_holder(),
                    }],
                ),
            ] {
                operations.push(Operation {
                    name: n,
                    loc: m.loc.clone(),
                    oneway: false,
                    return_type: None,
                    params,
                    raises: Vec::new(),
                    contexts: Vec::new(),
                });
            }
        }
        let hi = Interface {
            is_abstract: false,
            is_local: false,
            bases: Vec::new(),
            definitions: Vec::new(),
            operations,
            attributes: Vec::new(),
        };
        let hdef = Definition {
            name: hname,
            scoped_name: scoped,
            repository_id,
            loc: def.loc.clone(),
            from_main_file: def.from_main_file,
            kind: DefinitionKind::Interface(hi.clone()),
        };
        (hdef, hi)
    }

    /// An owned copy of an `in` argument, for the call's future (which outlives the caller's
    /// borrows).
    fn owned_arg(&self, ty: &Type, n: &str) -> String {
        if self.objref(ty).is_some() {
            return format!("{n}.cloned()");
        }
        if self.by_value(ty) {
            return n.to_string();
        }
        match self.resolve(ty) {
            _ if self.caps(ty).copy => format!("*{n}"),
            Type::String { .. } | Type::WString { .. } => format!("{n}.to_owned()"),
            Type::Sequence { .. } => format!("{n}.to_vec()"),
            _ => format!("{n}.clone()"),
        }
    }

    /// An owned value passed where `in_type(ty)` is expected.
    fn pass_in(&self, ty: &Type, n: &str) -> String {
        if self.objref(ty).is_some() {
            format!("{n}.as_ref()")
        } else if self.by_value(ty) {
            n.to_string()
        } else {
            format!("&{n}")
        }
    }

    fn gen_sendc(
        &mut self,
        m: &Method,
        name: &str,
        sendc: &str,
        handler: &str,
        (hm, excep): (&String, &String),
    ) {
        let taken: Vec<String> = m.params.iter().map(|p| p.1.clone()).collect();
        let h = fresh("ami_handler", &taken);
        let proxy = fresh("ami_proxy", &taken);
        let result = fresh("ami_result", &taken);
        let holder = fresh("ami_holder", &taken);
        let mut args = vec![
            "&self".to_string(),
            format!("{h}: ::core::option::Option<&{handler}>"),
        ];
        for (_, n, dir, ty) in &m.params {
            if *dir != ParamDir::Out {
                args.push(format!("{n}: {}", self.in_type(ty)));
            }
        }
        self.out.line(format!(
            "/// AMI `sendc_{}`: sends the request, and delivers its outcome to `{h}` (its `{}` or",
            handler_op(m),
            hm.trim_start_matches("r#"),
        ));
        self.out
            .line("/// `…_excep` operation, on an ORB thread); a nil handler ignores the outcome.");
        self.out
            .open(format!("pub fn {sendc}({})", args.join(", ")));
        self.out.line(format!(
            "let {proxy} = {name}Async {{ obj: self.obj.clone() }};"
        ));
        self.out.line(format!("let {h} = {h}.cloned();"));
        let mut call_args = Vec::new();
        for (_, n, dir, ty) in &m.params {
            match dir {
                ParamDir::Out => {}
                ParamDir::In => {
                    let owned = self.owned_arg(ty, n);
                    // Values passed by value move in as they are.
                    if owned != *n {
                        self.out.line(format!("let {n} = {owned};"));
                    }
                    call_args.push(self.pass_in(ty, n));
                }
                ParamDir::InOut => {
                    self.out
                        .line(format!("let mut {n} = {};", self.owned_arg(ty, n)));
                    call_args.push(format!("&mut {n}"));
                }
            }
        }
        self.out.open("::corbina::ami::send(async move");
        self.out.line(format!(
            "let {result} = {proxy}.{}({}).await;",
            m.proxy,
            call_args.join(", ")
        ));
        // The success pattern: return value, then out parameters (inouts were written back).
        let mut names: Vec<String> = Vec::new();
        let mut handler_args: Vec<String> = Vec::new();
        if let Some(t) = &m.ret {
            let n = fresh("ami_return_val", &taken);
            handler_args.push(self.pass_in(t, &n));
            names.push(n);
        }
        for (_, n, dir, ty) in &m.params {
            match dir {
                ParamDir::In => {}
                ParamDir::InOut => handler_args.push(self.pass_in(ty, n)),
                ParamDir::Out => {
                    let local = fresh(&format!("{}_out", n.trim_start_matches("r#")), &taken);
                    handler_args.push(self.pass_in(ty, &local));
                    names.push(local);
                }
            }
        }
        let pat = match names.len() {
            0 => "()".to_string(),
            1 => names[0].clone(),
            _ => format!("({})", names.join(", ")),
        };
        let delivery = fresh("ami_delivery", &taken);
        self.out.open(format!(
            "let {delivery}: ::corbina::ami::Delivery = ::std::boxed::Box::new(move ||"
        ));
        self.out.open(format!("if let Some({h}) = {h}"));
        self.out
            .line("// The handler's own errors have nowhere to go: the caller has moved on.");
        self.out.open(format!("let _ = match {result}"));
        self.out.line(format!(
            "Ok({pat}) => {h}.{hm}({}),",
            handler_args.join(", ")
        ));
        self.out.open("Err(e) =>");
        self.out.line(format!(
            "let {holder} = ::corbina::ami::ExceptionHolder::new(&e);"
        ));
        self.out.line(format!("{h}.{excep}(&{holder})"));
        self.out.close();
        self.out.close_with(";");
        self.out.close();
        self.out.close_with(");");
        self.out.line(delivery);
        self.out.close_with(");");
        self.out.close();
    }

    /// `corbina::ami::RaisedException` for an operation's error enum `en`, so that an
    /// `ExceptionHolder` can carry it.
    pub(crate) fn gen_raised_exception(&mut self, en: &str, m: &Method) {
        self.out.blank();
        self.out
            .open(format!("impl ::corbina::ami::RaisedException for {en}"));
        self.out.open(format!(
            "fn system_exception(&self) -> ::core::option::Option<&{SYS}>"
        ));
        self.out.open("match self");
        self.out.line("Self::System(e) => Some(e),");
        self.out.line("_ => None,");
        self.out.close();
        self.out.close();
        self.out.blank();
        self.out.open("fn encode_user_exception<'a>(&'a self, w: &mut ::corbina::cdr::CdrWriter<'a>) -> ::corbina::cdr::Result<()>");
        self.out.open("match self");
        for v in &m.variants {
            self.out.line(format!(
                "Self::{v}(e) => ::corbina::cdr::CdrEncode::encode(e, w),"
            ));
        }
        self.out.line("Self::System(_) => Ok(()),");
        self.out.close();
        self.out.close();
        self.out.blank();
        self.out.open("fn decode_user_exception(repository_id: &str, r: &mut ::corbina::cdr::CdrReader<'_>) -> ::corbina::cdr::Result<::core::option::Option<Self>>");
        self.out.open("Ok(match repository_id");
        for (ex, v) in m.raises.iter().zip(&m.variants) {
            let Some(exd) = self.lookup(ex) else { continue };
            let path = self.type_path(ex);
            self.out.line(format!(
                "{:?} => Some(Self::{v}(<{path} as ::corbina::cdr::CdrDecode>::decode(r)?)),",
                exd.repository_id,
            ));
        }
        self.out.line("_ => None,");
        self.out.close_with(")");
        self.out.close();
        self.out.close();
    }
}
