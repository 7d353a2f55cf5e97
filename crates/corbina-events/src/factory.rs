//! The channel factory, as omniEvents serves it: a `CosLifeCycle::GenericFactory` whose
//! only key is `[{id "EventChannel", kind "object interface"}]` and whose criteria set the
//! new channel's parameters. omniEvents' `eventc` creates channels through it.
//!
//! | criterion | type | meaning here |
//! |---|---|---|
//! | `InsName` | string | the corbaloc object key the channel is also served under |
//! | `MaxQueueLength` | unsigned integer | events held per consumer (the oldest is dropped beyond it) |
//! | `PullRetryPeriod_ms` | unsigned integer | the wait before asking a pull supplier again after `try_pull` found nothing |
//! | `MaxNumProxies` | unsigned integer | the most proxies the channel may have (beyond: IMP_LIMIT) |
//! | `CyclePeriod_ns` | unsigned integer | accepted and ignored: omniEvents batches deliveries by this period, Corbina delivers at once |
//!
//! `FilterId` (omniEvents' typed filtering) is refused with `CannotMeetCriteria`; unknown
//! criteria, or values of the wrong type, with `InvalidCriteria`.

use std::sync::Weak;

use corbina::{Any, ObjectRef, SystemException};

use crate::channel::{gone, Shared};
use crate::cos_life_cycle::generic_factory::CreateObjectError;
use crate::cos_life_cycle::{
    CannotMeetCriteria, GenericFactoryServant, InvalidCriteria, NameValuePair, NoFactory,
};
use crate::cos_naming::NameComponent;
use crate::omni_events::EventChannelFactoryServant;
use crate::store::ChannelParams;

/// The key `create_object` accepts.
pub const CHANNEL_KEY: (&str, &str) = ("EventChannel", "object interface");

pub(crate) struct Factory {
    pub(crate) shared: Weak<Shared>,
}

fn is_channel_key(k: &[NameComponent]) -> bool {
    matches!(k, [c] if c.id == CHANNEL_KEY.0 && c.kind == CHANNEL_KEY.1)
}

/// A non-negative integer of any IDL integer type.
fn unsigned(a: &Any) -> Option<u64> {
    a.to_ulong()
        .map(u64::from)
        .or_else(|| a.to_ushort().map(u64::from))
        .or_else(|| a.to_ulonglong())
        .or_else(|| a.to_long().and_then(|v| u64::try_from(v).ok()))
        .or_else(|| a.to_short().and_then(|v| u64::try_from(v).ok()))
        .or_else(|| a.to_longlong().and_then(|v| u64::try_from(v).ok()))
}

/// Which criteria are wrong, and how.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Rejected {
    invalid: Vec<NameValuePair>,
    unmet: Vec<NameValuePair>,
}

/// The parameters `criteria` ask for, over `defaults`.
pub(crate) fn parse_criteria(
    criteria: &[NameValuePair],
    defaults: &ChannelParams,
) -> Result<ChannelParams, Rejected> {
    let mut p = defaults.clone();
    p.ins_name = None;
    let mut r = Rejected::default();
    for c in criteria {
        let u32_value = || unsigned(&c.value).and_then(|v| u32::try_from(v).ok());
        let ok = match c.name.as_str() {
            "InsName" => match c.value.to_string_value() {
                Some(n) if !n.is_empty() && n != crate::FACTORY_KEY => {
                    p.ins_name = Some(n);
                    true
                }
                Some(_) => {
                    r.unmet.push(c.clone());
                    continue;
                }
                None => false,
            },
            "MaxQueueLength" => u32_value()
                .filter(|v| *v > 0)
                .map(|v| p.max_queue = v)
                .is_some(),
            "PullRetryPeriod_ms" => u32_value().map(|v| p.pull_retry_ms = v).is_some(),
            "MaxNumProxies" => u32_value()
                .filter(|v| *v > 0)
                .map(|v| p.max_proxies = v)
                .is_some(),
            "CyclePeriod_ns" => u32_value().is_some(),
            "FilterId" => {
                r.unmet.push(c.clone());
                continue;
            }
            _ => false,
        };
        if !ok {
            r.invalid.push(c.clone());
        }
    }
    if r == Rejected::default() {
        Ok(p)
    } else {
        Err(r)
    }
}

impl GenericFactoryServant for Factory {
    fn supports(&self, k: &[NameComponent]) -> Result<bool, SystemException> {
        Ok(is_channel_key(k))
    }

    fn create_object(
        &self,
        k: &[NameComponent],
        the_criteria: &[NameValuePair],
    ) -> Result<Option<ObjectRef>, CreateObjectError> {
        if !is_channel_key(k) {
            return Err(NoFactory {
                search_key: k.to_vec(),
            }
            .into());
        }
        let shared = self.shared.upgrade().ok_or_else(gone)?;
        let params = match parse_criteria(the_criteria, &shared.default_params()) {
            Ok(p) => p,
            Err(r) if !r.invalid.is_empty() => {
                return Err(InvalidCriteria {
                    invalid_criteria: r.invalid,
                }
                .into())
            }
            Err(r) => {
                return Err(CannotMeetCriteria {
                    unmet_criteria: r.unmet,
                }
                .into())
            }
        };
        let name = params.ins_name.clone();
        match crate::service::create_channel(&shared, params)? {
            Some(ch) => Ok(Some(ch)),
            // The InsName is taken.
            None => Err(CannotMeetCriteria {
                unmet_criteria: the_criteria
                    .iter()
                    .filter(|c| c.name == "InsName" && c.value.to_string_value() == name)
                    .cloned()
                    .collect(),
            }
            .into()),
        }
    }
}

impl EventChannelFactoryServant for Factory {}

#[cfg(test)]
mod tests {
    use super::*;

    fn nv(name: &str, value: Any) -> NameValuePair {
        NameValuePair {
            name: name.into(),
            value,
        }
    }

    fn defaults() -> ChannelParams {
        ChannelParams {
            max_queue: 100,
            pull_retry_ms: 50,
            max_proxies: 1000,
            ins_name: Some("ignored".into()),
        }
    }

    #[test]
    fn criteria_set_parameters() {
        let p = parse_criteria(
            &[
                nv("InsName", Any::from_string("Alarms").unwrap()),
                nv("MaxQueueLength", Any::from_ulong(7)),
                nv("PullRetryPeriod_ms", Any::from_long(3)),
                nv("CyclePeriod_ns", Any::from_ulong(1000)),
                nv("MaxNumProxies", Any::from_ushort(4)),
            ],
            &defaults(),
        )
        .unwrap();
        assert_eq!(
            p,
            ChannelParams {
                max_queue: 7,
                pull_retry_ms: 3,
                max_proxies: 4,
                ins_name: Some("Alarms".into())
            }
        );
        let p = parse_criteria(&[], &defaults()).unwrap();
        assert_eq!((p.max_queue, p.ins_name), (100, None));
    }

    #[test]
    fn bad_criteria_are_refused() {
        let r = parse_criteria(
            &[
                nv("MaxQueueLength", Any::from_string("x").unwrap()),
                nv("MaxQueueLength", Any::from_long(-1)),
                nv("MaxQueueLength", Any::from_ulong(0)),
                nv("Colour", Any::from_ulong(1)),
                nv("FilterId", Any::from_string("IDL:X:1.0").unwrap()),
                nv("InsName", Any::from_string(crate::FACTORY_KEY).unwrap()),
            ],
            &defaults(),
        )
        .unwrap_err();
        assert_eq!(r.invalid.len(), 4);
        assert_eq!(r.unmet.len(), 2);
        let r = parse_criteria(&[nv("MaxNumProxies", Any::from_ulong(0))], &defaults());
        assert_eq!(r.unwrap_err().invalid.len(), 1);
    }

    #[test]
    fn only_the_channel_key_is_supported() {
        let c = |id: &str, kind: &str| NameComponent {
            id: id.into(),
            kind: kind.into(),
        };
        assert!(is_channel_key(&[c("EventChannel", "object interface")]));
        assert!(!is_channel_key(&[c("EventChannel", "")]));
        assert!(!is_channel_key(&[]));
        assert!(!is_channel_key(&[
            c("EventChannel", "object interface"),
            c("EventChannel", "object interface")
        ]));
    }
}
