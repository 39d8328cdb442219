//! The rounds in virtual time: contenders whose ratios and load a script
//! gives, on a clock that moves only as they are measured, so that no
//! verdict here depends on this machine.

use std::time::{Duration, Instant};

use super::*;
use crate::runner::rounds::{measured_at, Measure};

/// A generator of the scripts' numbers: the same every run (xorshift64*).
struct Draws(u64);

impl Draws {
    /// Uniform in [0, 1).
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box-Muller).
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform().max(1e-300), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// Two sides on a machine in virtual time: A at 10 ms; B at 10 ms times a
/// ratio the script draws for its round; each turn takes `turn` of the
/// clock, while other processes use `load` cores. Their CPU time is the
/// same as their wall time, or where `cpu_ratio` draws B's CPU time over
/// A's for the round, that.
struct Pair<F: FnMut(&mut Draws) -> f64> {
    now: Instant,
    turn: Duration,
    load: f64,
    ratio: F,
    cpu_ratio: Option<fn(&mut Draws) -> f64>,
    draws: Draws,
    drawn: (f64, f64),
    turns: usize,
}

impl<F: FnMut(&mut Draws) -> f64> Pair<F> {
    fn new(seed: u64, load: f64, ratio: F) -> Pair<F> {
        Pair {
            now: Instant::now(),
            turn: Duration::from_secs(1),
            load,
            ratio,
            cpu_ratio: None,
            draws: Draws(seed | 1),
            drawn: (1.0, 1.0),
            turns: 0,
        }
    }
}

impl<F: FnMut(&mut Draws) -> f64> Lineup for Pair<F> {
    fn contenders(&self) -> usize {
        2
    }

    fn now(&self) -> Instant {
        self.now
    }

    fn measure(&mut self, at: usize) -> Result<Option<Measured>> {
        self.now += self.turn;
        // A round is A B or B A: its ratio is drawn at its first turn.
        if self.turns.is_multiple_of(2) {
            let wall = (self.ratio)(&mut self.draws);
            self.drawn = (wall, self.cpu_ratio.map_or(wall, |cpu| cpu(&mut self.draws)));
        }
        self.turns += 1;
        let (wall, cpu) = if at == 0 { (1.0, 1.0) } else { self.drawn };
        let mut measured = measured_at(10.0 * wall);
        measured.cpu_min_ms = Some(10.0 * cpu);
        measured.other_load_cores = Some(self.load);
        Ok(Some(measured))
    }
}

fn compare_plan(budget_s: Option<u64>) -> RoundsPlan {
    RoundsPlan {
        looks: Looks::doubling(4, 1),
        min_effect_percent: 2.0,
        precision: None,
        budget: budget_s.map(Duration::from_secs),
        budget_flag: "--timing-budget",
        pairs: vec![(0, 1)],
        measure: Measure::Wall,
    }
}

fn judged(lineup: &mut dyn Lineup, plan: &RoundsPlan) -> Judged {
    rounds_until_decided(lineup, plan, 2, |_| {}).unwrap()
}

#[test]
fn the_verdict_is_the_interval_against_the_minimum_effect() {
    let speed = |low, high| Speed::of(Some([low, high]), 2.0);
    assert_eq!(speed(0.985, 1.019), Speed::Same);
    assert_eq!(speed(0.98, 1.02), Speed::Same);
    assert_eq!(speed(0.5, 0.979), Speed::Faster);
    assert_eq!(speed(1.021, 3.0), Speed::Slower);
    // Beyond 1 but not beyond the minimum effect: statistically slower, practically nothing.
    assert_eq!(speed(1.005, 1.03), Speed::Undecided);
    assert_eq!(speed(0.978, 0.997), Speed::Undecided);
    // Nothing learnt.
    assert_eq!(speed(0.002, 2.294), Speed::Undecided);
    assert_eq!(Speed::of(None, 2.0), Speed::Undecided);
}

#[test]
fn the_looks_double_from_the_fewest_rounds_with_an_interval() {
    let compare = Looks::doubling(4, 1);
    assert_eq!(compare.at, [8, 16, 32, 64]);
    assert!((compare.confidence - 0.9875).abs() < 1e-12);
    let tune = Looks::doubling(3, 2);
    assert_eq!(tune.at, [8, 16, 32]);
    assert_eq!(Looks::doubling(3, 3).at, [9, 18, 36]);
    assert_eq!(Looks::fixed(10).at, [10]);
}

#[test]
fn a_clear_slowdown_is_decided_at_the_first_look() {
    let mut pair = Pair::new(1, 0.0, |draws| 1.5 * (1.0 + 0.05 * draws.normal()));
    let outcome = judged(&mut pair, &compare_plan(Some(60)));
    assert_eq!((outcome.rounds.len(), outcome.ended), (8, Ended::Decided));
    assert_eq!(outcome.looked, [8]);
    let verdict = &outcome.verdicts[0];
    assert_eq!(verdict.speed, Speed::Slower);
    assert_eq!(verdict.reason, None);
    assert!((outcome.noise.other_load_cores.unwrap()).abs() < 1e-12);
}

#[test]
fn the_same_speed_is_said_only_once_the_interval_lies_within_the_minimum_effect() {
    // The model against itself, quiet: each round's ratio within about 1%.
    let mut pair = Pair::new(7, 0.05, |draws| 1.0 + 0.006 * draws.normal());
    let outcome = judged(&mut pair, &compare_plan(Some(600)));
    let verdict = &outcome.verdicts[0];
    assert_eq!(verdict.speed, Speed::Same, "{verdict:?}");
    let [low, high] = verdict.interval.unwrap();
    assert!(low >= 0.98 && high <= 1.02);
    // A ratio of 0.99 more than a 1% spread leaves 8 rounds' range across 0.98: more rounds decide it.
    let mut near = Pair::new(3, 0.05, |draws| 0.99 * (1.0 + 0.012 * draws.normal()));
    let outcome = judged(&mut near, &compare_plan(Some(600)));
    assert!(outcome.looked.len() > 1, "{:?}", outcome.looked);
    assert!(outcome.rounds.len() > 8);
}

#[test]
fn the_budget_ends_the_rounds_with_too_few_to_decide() {
    // Each round takes 2 s of the 20 s: the rounds stop at 10, between the looks at 8 and 16.
    let mut pair = Pair::new(5, 0.0, |draws| 1.0 + 0.05 * draws.normal());
    let outcome = judged(&mut pair, &compare_plan(Some(20)));
    assert_eq!((outcome.rounds.len(), outcome.ended), (10, Ended::Budget));
    assert_eq!(outcome.looked, [8, 10]);
    assert!(outcome.took <= Duration::from_secs(20));
    let verdict = &outcome.verdicts[0];
    assert_eq!(verdict.speed, Speed::Undecided);
    let reason = verdict.reason.as_deref().unwrap();
    assert!(
        reason.starts_with("too few rounds: its interval [")
            && reason.ends_with("reaches across 1 ± 2%; the --timing-budget of 20 s was spent after 10 rounds"),
        "{reason}"
    );
}

/// Rounds of 3 s and of 1 s in turn, as a load that comes and goes makes them.
struct Uneven {
    now: Instant,
    turns: usize,
}

impl Lineup for Uneven {
    fn contenders(&self) -> usize {
        2
    }

    fn now(&self) -> Instant {
        self.now
    }

    fn measure(&mut self, _: usize) -> Result<Option<Measured>> {
        let round = self.turns / 2;
        self.turns += 1;
        self.now += Duration::from_millis(if round.is_multiple_of(2) { 1500 } else { 500 });
        Ok(Some(measured_at(10.0)))
    }
}

#[test]
fn a_round_starts_only_while_the_longest_round_fits() {
    // After 4 rounds, 8 s of 10: their mean (2 s) fits, the longest (3 s) does not, and the
    // fifth would take 3 s.
    let mut uneven = Uneven {
        now: Instant::now(),
        turns: 0,
    };
    let outcome = judged(&mut uneven, &compare_plan(Some(10)));
    assert_eq!((outcome.rounds.len(), outcome.ended), (4, Ended::Budget));
    assert_eq!(outcome.took, Duration::from_secs(8));
}

#[test]
fn fixed_rounds_are_looked_at_once() {
    let mut pair = Pair::new(5, 0.0, |draws| 1.0 + 0.05 * draws.normal());
    let plan = RoundsPlan {
        looks: Looks::fixed(6),
        ..compare_plan(None)
    };
    let outcome = judged(&mut pair, &plan);
    assert_eq!(
        (outcome.rounds.len(), outcome.ended, outcome.looked.clone()),
        (6, Ended::Rounds, vec![6])
    );
    let reason = outcome.verdicts[0].reason.clone().unwrap();
    assert!(reason.ends_with("; --rounds fixed 6 rounds"), "{reason}");
}

/// Two processes burning the CPU: each round's ratio anywhere from a
/// hundredth to a hundred (one side starved, then the other), the load 1.9
/// of 2 cores. Undecided, and the load is the reason.
#[test]
fn a_loaded_machine_leaves_the_verdict_undecided_and_says_why() {
    let mut pair = Pair::new(11, 1.9, starved);
    let outcome = judged(&mut pair, &compare_plan(Some(60)));
    assert_eq!(outcome.ended, Ended::Budget);
    let verdict = &outcome.verdicts[0];
    assert_eq!(verdict.speed, Speed::Undecided);
    assert!(outcome.noise.loaded());
    let reason = verdict.reason.as_deref().unwrap();
    assert!(
        reason.starts_with(
            "the machine was loaded: other processes used 1.9 of its 2 cores during the rounds; its interval ["
        ),
        "{reason}"
    );
}

/// Starved rounds' wall times (`a_loaded_machine_leaves_the_verdict_undecided_and_says_why`).
fn starved(draws: &mut Draws) -> f64 {
    (4.6 * (2.0 * draws.uniform() - 1.0)).exp()
}

/// The CPU time of the model against itself beside busy processes: each
/// round's ratio within about 1.5%, one round in ten off by up to 6%.
fn cpu_of_the_same_work(draws: &mut Draws) -> f64 {
    let spread = if draws.uniform() < 0.1 { 0.03 } else { 0.007 };
    1.0 + spread * draws.normal()
}

/// The same two processes burning the CPU, where both sides run alike: the
/// rounds are held on CPU time, which the load barely moves, and decide.
#[test]
fn a_loaded_machine_holds_sides_that_run_alike_on_cpu_time() {
    let plan = RoundsPlan {
        measure: Measure::Cpu,
        ..compare_plan(Some(60))
    };
    let mut pair = Pair::new(11, 1.9, starved);
    pair.cpu_ratio = Some(cpu_of_the_same_work);
    let outcome = judged(&mut pair, &plan);
    assert_eq!(
        (outcome.measure, outcome.verdicts[0].speed),
        (Measure::Cpu, Speed::Same)
    );
    let [low, high] = outcome.verdicts[0].interval.unwrap();
    assert!(low >= 0.98 && high <= 1.02, "{low} {high}");
    // One convolution more: 8% more work, slower on CPU time under the same load.
    let mut pair = Pair::new(11, 1.9, starved);
    pair.cpu_ratio = Some(|draws| 1.08 * cpu_of_the_same_work(draws));
    let outcome = judged(&mut pair, &plan);
    assert_eq!(
        (outcome.measure, outcome.verdicts[0].speed),
        (Measure::Cpu, Speed::Slower)
    );
    // Sides unlike in threads stay on wall time under load.
    let mut unlike = Pair::new(11, 1.9, starved);
    unlike.cpu_ratio = Some(cpu_of_the_same_work);
    let outcome = judged(&mut unlike, &compare_plan(Some(60)));
    assert_eq!(
        (outcome.measure, outcome.verdicts[0].speed),
        (Measure::Wall, Speed::Undecided)
    );
}

/// Tune wants the size of a gain: a `faster` whose interval spans more than
/// the precision asked is not decided, and more rounds narrow it.
#[test]
fn a_wide_faster_is_not_decided_where_precision_is_asked() {
    // Mostly 0.4; one round in four starved to 0.04 or 4: the range of 8 rounds is wide.
    let script = |draws: &mut Draws| match (draws.uniform() * 8.0) as u32 {
        0 => 0.04,
        1 => 4.0,
        _ => 0.4 * (1.0 + 0.02 * draws.normal()),
    };
    let plan = RoundsPlan {
        precision: Some(1.5),
        ..compare_plan(Some(600))
    };
    let outcome = judged(&mut Pair::new(13, 0.0, script), &plan);
    assert!(outcome.looked.len() > 1, "{:?}", outcome.looked);
    let verdict = &outcome.verdicts[0];
    let [low, high] = verdict.interval.unwrap();
    assert_eq!(verdict.speed, Speed::Faster, "{verdict:?}");
    assert!(high <= low * 1.5);
}

/// What the looks are for: over many comparisons of two sides that are the
/// same (a heavy-tailed spread, an outlier round in ten), a verdict of
/// `faster` or `slower` is rare, at most the 5% the intervals promise.
/// Taking each look at 95% instead, as though it were the only one, is
/// wrong more often: the scheme is what keeps the promise.
#[test]
fn looking_more_than_once_keeps_the_false_verdicts_within_five_percent() {
    let null = |draws: &mut Draws| {
        let spread = if draws.uniform() < 0.1 { 0.2 } else { 0.03 };
        (spread * draws.normal()).exp()
    };
    let false_verdicts = |looks: Looks, seed: u64| {
        let plan = RoundsPlan {
            looks,
            min_effect_percent: 0.0,
            ..compare_plan(None)
        };
        (0..2000)
            .filter(|trial| {
                let mut pair = Pair::new(seed + trial, 0.0, null);
                let speed = judged(&mut pair, &plan).verdicts[0].speed;
                matches!(speed, Speed::Faster | Speed::Slower)
            })
            .count() as f64
            / 2000.0
    };
    let honest = false_verdicts(Looks::doubling(4, 1), 100);
    assert!(honest <= 0.05, "{honest}");
    // Under load, held on CPU time: the measure is chosen from the load, never from the ratios.
    let loaded = RoundsPlan {
        min_effect_percent: 0.0,
        measure: Measure::Cpu,
        ..compare_plan(None)
    };
    let loaded_false = (0..2000)
        .filter(|trial| {
            let mut pair = Pair::new(300 + trial, 1.9, starved);
            pair.cpu_ratio = Some(|draws| {
                let spread = if draws.uniform() < 0.1 { 0.2 } else { 0.03 };
                (spread * draws.normal()).exp()
            });
            let outcome = judged(&mut pair, &loaded);
            assert_eq!(outcome.measure, Measure::Cpu);
            matches!(outcome.verdicts[0].speed, Speed::Faster | Speed::Slower)
        })
        .count() as f64
        / 2000.0;
    assert!(loaded_false <= 0.05, "{loaded_false}");
    let naive = Looks {
        confidence: 0.95,
        ..Looks::doubling(4, 1)
    };
    let naive = false_verdicts(naive, 100);
    eprintln!("false verdicts: {honest} with the looks at 1 - 0.05/4, {naive} at 95% each");
    assert!(naive > honest, "{naive} against {honest}");
}

/// A lineup that keeps what it was told to hold the rounds on, and when.
struct Told {
    told: Vec<(Measure, usize)>,
    turns: usize,
    cpu_ms: f64,
}

impl Lineup for Told {
    fn contenders(&self) -> usize {
        2
    }

    fn hold_on(&mut self, measure: Measure) {
        self.told.push((measure, self.turns));
    }

    fn measure(&mut self, _: usize) -> Result<Option<Measured>> {
        self.turns += 1;
        let mut measured = measured_at(10.0);
        measured.cpu_min_ms = Some(self.cpu_ms);
        Ok(Some(measured))
    }
}

/// The measure is chosen before the rounds, from the sides and the load
/// alone, and the lineup is told it before its first turn, since its
/// children run differently on CPU time; a turn without a CPU time to hold
/// takes the rounds back to wall time.
#[test]
fn the_measure_is_chosen_before_the_rounds_and_told_first() {
    assert_eq!(Measure::before_rounds(true, || true), Measure::Cpu);
    assert_eq!(Measure::before_rounds(true, || false), Measure::Wall);
    let unasked = || panic!("the load is asked only of sides that run alike");
    assert_eq!(Measure::before_rounds(false, unasked), Measure::Wall);
    let plan = RoundsPlan {
        looks: Looks::fixed(6),
        measure: Measure::Cpu,
        ..compare_plan(None)
    };
    let mut lineup = Told {
        told: Vec::new(),
        turns: 0,
        cpu_ms: 10.0,
    };
    let outcome = judged(&mut lineup, &plan);
    assert_eq!(lineup.told, [(Measure::Cpu, 0)]);
    assert_eq!((outcome.measure, outcome.rounds.len()), (Measure::Cpu, 6));
    // A run of 5 µs: its CPU time is much of it the clock's reading.
    let mut short = Told {
        told: Vec::new(),
        turns: 0,
        cpu_ms: 0.005,
    };
    assert_eq!(judged(&mut short, &plan).measure, Measure::Wall);
}
