use super::*;
use crate::parser::Parser;
use crate::preprocess::Preprocessor;

fn eval_str(src: &str, kind: &ConstKind) -> Result<ConstValue, String> {
    let mut w = Vec::new();
    let toks = Preprocessor::new(&[], &[], &mut w)
        .unwrap()
        .run_str("c.idl", &format!("const long x = {src};"))
        .unwrap();
    let defs = Parser::new(toks, &mut w)
        .parse_specification()
        .map_err(|e| e.to_string())?;
    let crate::ast::Def::Const { expr, .. } = &defs[0] else {
        panic!()
    };
    let names = |n: &ScopedNameRef| -> PResult<ConstValue> {
        match n.parts.last().map(String::as_str) {
            Some("TEN") => Ok(ConstValue::Integer(10)),
            _ => Err(Diagnostic::error(&n.loc, format!("'{n}' is not defined"))),
        }
    };
    evaluate(expr, kind, &names).map_err(|e| e.to_string())
}

#[test]
fn integer_arithmetic_and_ranges() {
    let long = ConstKind::int("long");
    assert_eq!(
        eval_str("(1 + 2) * 3 - 4 / 2 % 3", &long),
        Ok(ConstValue::Integer(7))
    );
    assert_eq!(
        eval_str("1 << 4 | 3 & 1 ^ 8", &long),
        Ok(ConstValue::Integer(16 | (3 & 1 ^ 8)))
    );
    assert_eq!(eval_str("-TEN + +2", &long), Ok(ConstValue::Integer(-8)));
    assert_eq!(
        eval_str("~0", &ConstKind::int("unsigned long")),
        Ok(ConstValue::Integer(0xFFFF_FFFF))
    );
    assert_eq!(eval_str("~0", &long), Ok(ConstValue::Integer(-1)));
    assert_eq!(
        eval_str("0x7FFFFFFF", &long),
        Ok(ConstValue::Integer(i32::MAX as i128))
    );
    assert_eq!(
        eval_str("0x80000000", &long).unwrap_err(),
        "c.idl:1:16: error: value 2147483648 is out of range for type long"
    );
    assert_eq!(
        eval_str("-1", &ConstKind::int("unsigned short")).unwrap_err(),
        "c.idl:1:16: error: value -1 is out of range for type unsigned short"
    );
    assert_eq!(
        eval_str("1 / 0", &long).unwrap_err(),
        "c.idl:1:16: error: division by zero in constant expression"
    );
    assert_eq!(
        eval_str("1 << 64", &long).unwrap_err(),
        "c.idl:1:16: error: shift count 64 is out of range (0..63)"
    );
    assert_eq!(
        eval_str("255", &ConstKind::Octet),
        Ok(ConstValue::Octet(255))
    );
    assert!(eval_str("256", &ConstKind::Octet).is_err());
    assert_eq!(
        eval_str("0xFFFFFFFFFFFFFFFF", &ConstKind::int("unsigned long long")),
        Ok(ConstValue::Integer(u64::MAX as i128))
    );
    assert!(eval_str(
        "0xFFFFFFFFFFFFFFFF * 2",
        &ConstKind::int("unsigned long long")
    )
    .is_err());
}

#[test]
fn float_fixed_and_others() {
    let double = ConstKind::Float {
        max: f64::MAX,
        name: "double",
    };
    assert_eq!(eval_str("1.5 * 2.0", &double), Ok(ConstValue::Float(3.0)));
    // CORBA 3.0 §3.10.2: no mixtures of integers, floats and fixeds, no integer for a float.
    assert_eq!(
        eval_str("1.5 * 2", &double).unwrap_err(),
        "c.idl:1:16: error: operator '*' cannot mix floating-point and integer operands"
    );
    assert_eq!(
        eval_str("2", &double).unwrap_err(),
        "c.idl:1:16: error: integer value used where double is required"
    );
    assert!(eval_str("1.5d + 2.0", &ConstKind::Fixed)
        .unwrap_err()
        .contains("cannot mix fixed-point and floating-point operands"));
    assert!(eval_str("1.5 % 2.0", &double)
        .unwrap_err()
        .contains("not valid for floating-point"));
    let float = ConstKind::Float {
        max: f32::MAX as f64,
        name: "float",
    };
    assert!(eval_str("1e39", &float)
        .unwrap_err()
        .contains("out of range for type float"));
    assert!(eval_str("1.50d + 2", &ConstKind::Fixed)
        .unwrap_err()
        .contains("cannot mix"));
    let Ok(ConstValue::Fixed(f)) = eval_str("1.50d + 2d", &ConstKind::Fixed) else {
        panic!()
    };
    assert_eq!(f.to_string(), "3.5");
    let Ok(ConstValue::Fixed(f)) = eval_str("1.0d / 3.0d", &ConstKind::Fixed) else {
        panic!()
    };
    assert_eq!(f.digits(), 31);
    let Ok(ConstValue::Fixed(f)) = eval_str("0.25d * 0.5d", &ConstKind::Fixed) else {
        panic!()
    };
    assert_eq!(f.to_string(), "0.125");
    assert_eq!(
        eval_str("'a'", &ConstKind::Char),
        Ok(ConstValue::Char(b'a'))
    );
    assert_eq!(
        eval_str("L'a'", &ConstKind::WChar),
        Ok(ConstValue::WChar('a'))
    );
    assert_eq!(
        eval_str("'a'", &ConstKind::WChar).unwrap_err(),
        "c.idl:1:16: error: character value used where wchar is required"
    );
    assert_eq!(
        eval_str("TRUE", &ConstKind::Boolean),
        Ok(ConstValue::Boolean(true))
    );
    assert_eq!(
        eval_str("\"ab\" \"c\"", &ConstKind::String(Some(3))),
        Ok(ConstValue::String("abc".into()))
    );
    assert!(eval_str("\"abcd\"", &ConstKind::String(Some(3)))
        .unwrap_err()
        .contains("exceeds bound 3"));
    assert_eq!(
        eval_str("1", &ConstKind::Boolean).unwrap_err(),
        "c.idl:1:16: error: integer value used where boolean is required"
    );
    assert!(eval_str("'a' + 1", &ConstKind::Char).is_err());
}
