//! The policy's evaluation budget: a pull request may change the policy, so no rule may run
//! for ever or grow without end (R4-3). regorus's interpreter counts its work (each loop
//! iteration, each expression, each rule) against an execution timer that reads a clock only
//! through a time source; cfgctl gives it one that is a counter of that work on the current
//! thread, so the limit is a number of steps, the same on every machine and every run, not a
//! wall-clock time. `numbers.range` and `numbers.range_step`, which build a whole array in one
//! step, are replaced by versions that charge each number as a step and refuse an array
//! larger than the whole budget before building it, at their call.

use std::cell::Cell;
use std::num::NonZeroU32;
use std::time::Duration;

use regorus::utils::limits::{ExecutionTimerConfig, TimeSource};
use regorus::Value;

/// The steps one query (one rule over one input) may take: a few thousand for a rule over a
/// manifest, a few hundred thousand for a plan rule over a large plan; a runaway loop stops
/// within a second or two.
pub(crate) const STEPS: u64 = 2_000_000;

/// What the error of a query that passed the budget says (regorus's timer error names
/// nanoseconds, which here are steps).
pub(crate) const PASSED: &str = "passes the policy's evaluation budget";

thread_local! {
    /// The steps counted on this thread (never reset: the timer measures differences).
    static USED: Cell<u64> = const { Cell::new(0) };
}

/// How many units of work the interpreter counts between two readings of its clock: a reading
/// takes a lock shared by every thread, so not one per unit.
const INTERVAL: u32 = 64;

/// The time source: [`INTERVAL`] steps more at each reading (the interpreter reads it once
/// every `INTERVAL` units of work, and once when an evaluation starts).
struct Steps;

impl TimeSource for Steps {
    fn now(&self) -> Option<Duration> {
        let used = USED.with(|u| {
            let next = u.get().saturating_add(u64::from(INTERVAL));
            u.set(next);
            next
        });
        Some(Duration::from_nanos(used))
    }
}

static STEP_SOURCE: Steps = Steps;

/// Bounds `engine`: the step counter as the interpreter's clock (installed once per process),
/// the budget as its limit, and the array builtins charged per element.
pub(crate) fn bound(engine: &mut regorus::Engine) -> anyhow::Result<()> {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        // Already set only by another install of this same source.
        let _ = regorus::utils::limits::set_time_source(&STEP_SOURCE);
    });
    engine.set_execution_timer_config(ExecutionTimerConfig {
        limit: Duration::from_nanos(STEPS),
        check_interval: NonZeroU32::new(INTERVAL).unwrap_or(NonZeroU32::MIN),
    });
    engine.add_extension("numbers.range".into(), 2, Box::new(range))?;
    engine.add_extension("numbers.range_step".into(), 3, Box::new(range_step))?;
    Ok(())
}

/// Whether an evaluation error is the budget's (the interpreter's timer).
pub(crate) fn is_exhausted(error: &anyhow::Error) -> bool {
    error.chain().any(|e| {
        e.downcast_ref::<regorus::utils::limits::LimitError>()
            .is_some()
    }) || error.to_string().contains("exceeded time limit")
}

/// `numbers.range(a, b)`: the integers from `a` to `b`, both included, descending when `b < a`
/// (OPA's definition); undefined for a number that is not an integer, as the builtin is
/// when its errors are not strict.
fn range(args: Vec<Value>) -> anyhow::Result<Value> {
    let (Some(a), Some(b)) = (integer(&args[0]), integer(&args[1])) else {
        return Ok(Value::Undefined);
    };
    let step = if b >= a { 1 } else { -1 };
    numbers("numbers.range", a, b, step)
}

/// `numbers.range_step(a, b, step)`: from `a` towards `b` by `step` (a positive integer),
/// `b` included when reached.
fn range_step(args: Vec<Value>) -> anyhow::Result<Value> {
    let (Some(a), Some(b), Some(step)) = (integer(&args[0]), integer(&args[1]), integer(&args[2]))
    else {
        return Ok(Value::Undefined);
    };
    if step <= 0 {
        anyhow::bail!("numbers.range_step: step must be a positive integer");
    }
    let step = if b >= a { step } else { -step };
    numbers("numbers.range_step", a, b, step)
}

/// The integers from `a` by `step` while not past `b`, each charged as a step; an array
/// larger than the whole budget is refused before it is built.
fn numbers(name: &str, a: i128, b: i128, step: i128) -> anyhow::Result<Value> {
    let count = (b - a) / step + 1;
    let count = u64::try_from(count).unwrap_or(u64::MAX);
    if count > STEPS {
        anyhow::bail!("`{name}` of {count} numbers {PASSED} of {STEPS} steps");
    }
    USED.with(|u| u.set(u.get().saturating_add(count)));
    let mut values = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
    let mut n = a;
    for _ in 0..count {
        values.push(Value::from(i64::try_from(n)?));
        n += step;
    }
    Ok(Value::from(values))
}

/// A Rego number that is an integer (in the range of an `i64`).
fn integer(value: &Value) -> Option<i128> {
    match value {
        Value::Number(n) if n.is_integer() => n.as_i64().map(i128::from),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(rego: &str) -> regorus::Engine {
        let mut engine = regorus::Engine::new();
        bound(&mut engine).unwrap();
        engine.add_policy("p.rego".into(), rego.into()).unwrap();
        engine
    }

    fn eval(engine: &mut regorus::Engine, query: &str) -> anyhow::Result<serde_json::Value> {
        let results = engine.eval_query(query.into(), false)?;
        Ok(serde_json::to_value(
            &results.result[0].expressions[0].value,
        )?)
    }

    #[test]
    fn the_ranges_are_opas() {
        let mut e = engine(
            "package t\n\
             up := numbers.range(1, 4)\n\
             down := numbers.range(2, -1)\n\
             one := numbers.range(3, 3)\n\
             stepped := numbers.range_step(0, 10, 4)\n\
             stepped_down := numbers.range_step(3, -3, 3)\n\
             not_integer := numbers.range(1.5, 3)\n",
        );
        let v = eval(&mut e, "data.t").unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "up": [1, 2, 3, 4], "down": [2, 1, 0, -1], "one": [3],
                "stepped": [0, 4, 8], "stepped_down": [3, 0, -3],
            })
        );
    }

    #[test]
    fn a_range_larger_than_the_budget_is_refused_at_its_call() {
        let mut e = engine("package t\nx := count(numbers.range(1, 3000000000))\n");
        let err = eval(&mut e, "data.t.x").unwrap_err().to_string();
        assert!(err.contains("p.rego:2:25"), "{err}");
        assert!(
            err.contains("`numbers.range` of 3000000000 numbers passes"),
            "{err}"
        );
    }

    #[test]
    fn a_loop_stops_at_the_budget_and_the_same_query_then_runs_again() {
        let mut e = engine(
            "package t\nx if {\n\tsome a in numbers.range(1, 3000)\n\tsome b in numbers.range(1, 3000)\n\
             \ta + b < 0\n}\ny := 1\n",
        );
        let err = eval(&mut e, "data.t.x").unwrap_err();
        assert!(is_exhausted(&err), "{err:#}");
        // The budget is per query: the next one starts afresh.
        assert_eq!(eval(&mut e, "data.t.y").unwrap(), serde_json::json!(1));
    }
}
