//! Taints and tolerations, as kube-scheduler's `ToleratesTaint` evaluates them.

use crate::model::{Effect, Taint, Toleration};

/// True when `t` tolerates `taint`.
pub fn tolerates(t: &Toleration, taint: &Taint) -> bool {
    if t.effect.is_some_and(|e| e != taint.effect) {
        return false;
    }
    if t.key.is_empty() {
        // An empty key with Exists tolerates everything.
        return t.exists;
    }
    t.key == taint.key && (t.exists || t.value == taint.value)
}

/// The first taint (of any effect) none of the tolerations tolerate.
pub fn first_untolerated<'a>(
    taints: &'a [Taint],
    tols: &[Toleration],
    tolerate_prefer: bool,
) -> Option<&'a Taint> {
    taints.iter().find(|taint| {
        let ignored = tolerate_prefer && taint.effect == Effect::PreferNoSchedule;
        !ignored && !tols.iter().any(|t| tolerates(t, taint))
    })
}

/// Taints that only exist while a node is booting; ignored on uninitialized managed nodes.
pub fn is_ephemeral(taint: &Taint) -> bool {
    kerf_labels::is_ephemeral_taint(&taint.key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taint(key: &str, value: &str, effect: Effect) -> Taint {
        Taint {
            key: key.into(),
            value: value.into(),
            effect,
        }
    }

    fn tol(key: &str, exists: bool, value: &str, effect: Option<Effect>) -> Toleration {
        Toleration {
            key: key.into(),
            exists,
            value: value.into(),
            effect,
        }
    }

    #[test]
    fn equal_and_exists() {
        let t = taint("gpu", "true", Effect::NoSchedule);
        assert!(tolerates(&tol("gpu", false, "true", None), &t));
        assert!(!tolerates(&tol("gpu", false, "false", None), &t));
        assert!(tolerates(
            &tol("gpu", true, "", Some(Effect::NoSchedule)),
            &t
        ));
        assert!(!tolerates(
            &tol("gpu", true, "", Some(Effect::NoExecute)),
            &t
        ));
        assert!(
            tolerates(&tol("", true, "", None), &t),
            "empty key + Exists tolerates all"
        );
        assert!(!tolerates(&tol("", false, "", None), &t));
    }

    #[test]
    fn prefer_no_schedule_can_be_ignored() {
        let taints = [taint("a", "", Effect::PreferNoSchedule)];
        assert!(first_untolerated(&taints, &[], false).is_some());
        assert!(first_untolerated(&taints, &[], true).is_none());
    }
}
