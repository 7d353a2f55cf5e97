use super::*;
use crate::cos_notification::{
    EventHeader, EventType, FixedEventHeader, Property, StructuredEvent,
};
use corbina::cdr::{ByteOrder, CdrContext, CdrReader, CdrWriter};
use corbina::typecode::{TypeCode, UnionLabel, UnionMember};

fn prop(name: &str, value: Any) -> Property {
    Property {
        name: name.into(),
        value,
    }
}

/// An `Alarm` in domain `Telecom`, priority 5, with filterable data and a body.
fn alarm() -> Any {
    let ev = StructuredEvent {
        header: EventHeader {
            fixed_header: FixedEventHeader {
                event_type: EventType {
                    domain_name: "Telecom".into(),
                    type_name: "Alarm".into(),
                },
                event_name: "link-down".into(),
            },
            variable_header: vec![prop("priority", Any::from_short(5))],
        },
        filterable_data: vec![
            prop("severity", Any::from_long(3)),
            prop("message", Any::from_string("disk full on node7").unwrap()),
            prop("load", Any::from_double(0.75)),
            prop("up", Any::from_boolean(false)),
            prop(
                "nodes",
                Any::insert_as(
                    TypeCode::create_sequence_tc(0, TypeCode::LONG),
                    &vec![4i32, 7, 9],
                )
                .unwrap(),
            ),
        ],
        remainder_of_body: Any::from_ulonglong(1 << 40),
    };
    Any::insert(&ev).unwrap()
}

fn check(src: &str, event: &Any) -> bool {
    Constraint::parse(src)
        .unwrap_or_else(|e| panic!("{src}: {e}"))
        .matches(event)
}

#[test]
fn the_issue_example_and_shorthands() {
    let a = alarm();
    for yes in [
        "$type_name == 'Alarm' and $.header.variable_header(priority) > 3",
        "$domain_name == 'Telecom'",
        "$event_name == 'link-down'",
        "$.header.fixed_header.event_type.type_name == 'Alarm'",
        "$priority == 5",
        "$severity >= 3 and $severity < 4",
        "$.filterable_data(severity) == 3",
        "$.remainder_of_body == 1099511627776",
        "$load > 0.5 and $load * 2 == 1.5",
        "not $up",
        "$up == FALSE",
        "'disk' ~ $message",
        "7 in $nodes",
        "$nodes._length == 3",
        "$nodes[1] == 7",
        "$.filterable_data._length == 5",
        "$.header.fixed_header.event_type._type_id == 'EventType'",
        "$._repos_id == 'IDL:omg.org/CosNotification/StructuredEvent:1.0'",
        "exist $severity",
        "exist $.header.variable_header(priority)",
        "not exist $colour",
        "$.0.0.1 == 'link-down'",
        "($severity + 1) * 2 == 8 and 10 / 4 == 2.5 and -$severity == -3",
        "$colour == 'red' or $severity == 3",
        "",
        "   ",
        "TRUE",
    ] {
        assert!(check(yes, &a), "{yes} should hold");
    }
    for no in [
        "$type_name == 'Fault'",
        "$priority > 5",
        "'cpu' ~ $message",
        "8 in $nodes",
        "$colour == 'red'",
        "$severity == 'three'",
        "$severity / 0 == 1",
        "exist $.filterable_data(colour)",
        "$nodes[3] == 1",
        "FALSE",
        "$message",
    ] {
        assert!(!check(no, &a), "{no} should not hold");
    }
}

#[test]
fn plain_any_events() {
    assert!(check("$ == 42", &Any::from_long(42)));
    assert!(check("$ > 41.5", &Any::from_long(42)));
    assert!(!check("$ == 42", &Any::from_string("42").unwrap()));
    assert!(check("$ == '42'", &Any::from_string("42").unwrap()));
    // An any in an any is seen through.
    assert!(check("$ == 7", &Any::from_any(&Any::from_long(7)).unwrap()));
    // No structured shorthands on a plain value.
    assert!(!check("$type_name == 'x'", &Any::from_long(1)));
    // A struct's members by name.
    let et = Any::insert(&EventType {
        domain_name: "d".into(),
        type_name: "t".into(),
    })
    .unwrap();
    assert!(check("$.type_name == 't' and $domain_name == 'd'", &et));
}

/// A value of type `tc` from its big-endian CDR, written by `write`.
fn value(tc: TypeCode, write: impl FnOnce(&mut CdrWriter<'_>)) -> Any {
    let mut w = CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::GIOP_1_2);
    write(&mut w);
    let bytes = w.into_bytes();
    Any::read_value(
        tc,
        &mut CdrReader::new(&bytes, ByteOrder::Big, CdrContext::GIOP_1_2),
    )
    .unwrap()
}

#[test]
fn enums_and_unions() {
    let colour =
        TypeCode::create_enum_tc("IDL:Colour:1.0", "Colour", &["RED", "GREEN", "BLUE"]).unwrap();
    let e = value(colour.clone(), |w| w.write_ulong(2));
    assert!(check("$ == BLUE", &e));
    assert!(check("$ != RED", &e));
    assert!(check("$ == 2 and $ > GREEN", &e));
    // union Reading switch (long) { case 1: long count; case 2: string text; default: Colour c; };
    let reading = TypeCode::create_union_tc(
        "IDL:Reading:1.0",
        "Reading",
        TypeCode::LONG,
        vec![
            UnionMember::new("count", UnionLabel::Value(1), TypeCode::LONG),
            UnionMember::new("text", UnionLabel::Value(2), TypeCode::create_string_tc(0)),
            UnionMember::new("c", UnionLabel::Default, colour),
        ],
    )
    .unwrap();
    let count = value(reading.clone(), |w| {
        w.write_long(1);
        w.write_long(40);
    });
    assert!(check("$.count == 40 and $._d == 1 and $.(1) == 40", &count));
    assert!(check("not exist $.text and not default $", &count));
    assert!(!check("$.(2) == 40", &count));
    let text = value(reading.clone(), |w| {
        w.write_long(2);
        w.write_string("hot").unwrap();
    });
    assert!(check(
        "$.text == 'hot' and $.(2) == 'hot' and 'o' ~ $.text",
        &text
    ));
    let dflt = value(reading, |w| {
        w.write_long(9);
        w.write_ulong(1);
    });
    assert!(check(
        "default $ and $.() == GREEN and $.c == GREEN and $._d == 9",
        &dflt
    ));
}

#[test]
fn parse_errors_are_reported() {
    for bad in [
        "$type_name ==",
        "($a == 1",
        "'unterminated",
        "$.header.",
        "$[x]",
        "1 2",
        "#",
        "$a == 1 )",
        "$.(",
    ] {
        assert!(Constraint::parse(bad).is_err(), "{bad} should not parse");
    }
    assert_eq!(
        Constraint::parse(&"(".repeat(MAX_DEPTH + 1)),
        Err(ParseError::TooDeep)
    );
    assert_eq!(
        Constraint::parse(&"not ".repeat(MAX_DEPTH + 1)),
        Err(ParseError::TooDeep)
    );
    assert_eq!(
        Constraint::parse(&" ".repeat(MAX_LENGTH + 1)),
        Err(ParseError::TooLong)
    );
    // Deep but allowed nesting parses and evaluates.
    let deep = format!(
        "{}TRUE{}",
        "(".repeat(MAX_DEPTH - 1),
        ")".repeat(MAX_DEPTH - 1)
    );
    assert!(check(&deep, &Any::from_long(0)));
}

#[test]
fn string_escapes_and_non_ascii() {
    let s = Any::from_string("it's ünïcode").unwrap();
    assert!(check(r"$ == 'it\'s ünïcode'", &s));
    assert!(check("'ünï' ~ $", &s));
}

/// Pieces of the grammar, so that random constraints reach deep into the parser.
const PIECES: &[&str] = &[
    "$",
    "$priority",
    "$type_name",
    "$nodes",
    ".",
    "(",
    ")",
    "[",
    "]",
    "header",
    "variable_header",
    "priority",
    "filterable_data",
    "severity",
    "0",
    "1",
    "3",
    "2.5",
    "1e3",
    "'x'",
    "'disk'",
    "==",
    "!=",
    "<",
    ">=",
    "and",
    "or",
    "not",
    "in",
    "~",
    "exist",
    "default",
    "+",
    "-",
    "*",
    "/",
    "_length",
    "_d",
    "_type_id",
    "_repos_id",
    "TRUE",
    "FALSE",
    "RED",
    ".(",
    ".()",
    " ",
];

proptest::proptest! {
    #[test]
    fn random_constraints_never_panic(
        pieces in proptest::collection::vec(proptest::sample::select(PIECES), 0..40),
        noise in ".{0,40}",
    ) {
        let event = alarm();
        for src in [pieces.concat(), pieces.join(" "), noise] {
            if let Ok(c) = Constraint::parse(&src) {
                let _ = c.matches(&event);
                let _ = c.matches(&Any::from_long(1));
            }
        }
    }
}
