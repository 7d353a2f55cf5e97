//! Latency statistics: median and nearest-rank percentiles, computed as `omni_client` does
//! (median = mean of the two middle values for an even count; p-th percentile = the value at
//! rank ⌈p·n⌉), so figures from both tools compare.

/// A summary of a set of samples (microseconds, usually).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// Median.
    pub median: f64,
    /// 99th percentile (nearest rank).
    pub p99: f64,
    /// 99.9th percentile (nearest rank).
    pub p999: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
}

/// The nearest-rank `p`-quantile (0 < p ≤ 1) of sorted samples; 0 when empty.
pub fn percentile_sorted(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let n = sorted.len();
    let rank = ((p * n as f64).ceil() as usize).clamp(1, n);
    sorted[rank - 1]
}

/// The median of sorted samples; 0 when empty.
pub fn median_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]),
    }
}

/// Summarizes `samples` (sorting them in place).
pub fn summarize(samples: &mut [f64]) -> Summary {
    if samples.is_empty() {
        return Summary::default();
    }
    samples.sort_by(f64::total_cmp);
    let n = samples.len();
    Summary {
        n,
        median: median_sorted(samples),
        p99: percentile_sorted(samples, 0.99),
        p999: percentile_sorted(samples, 0.999),
        mean: samples.iter().sum::<f64>() / n as f64,
        min: samples[0],
        max: samples[n - 1],
    }
}

/// The median of unsorted values (copied); `None` when empty.
pub fn median_of(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    Some(median_sorted(&v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_odd_and_even() {
        assert_eq!(median_sorted(&[1.0, 2.0, 9.0]), 2.0);
        assert_eq!(median_sorted(&[1.0, 2.0, 4.0, 9.0]), 3.0);
        assert_eq!(median_sorted(&[]), 0.0);
        assert_eq!(median_of(&[5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median_of(&[]), None);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=1000).map(f64::from).collect();
        assert_eq!(percentile_sorted(&v, 0.99), 990.0);
        assert_eq!(percentile_sorted(&v, 0.999), 999.0);
        assert_eq!(percentile_sorted(&v, 1.0), 1000.0);
        assert_eq!(percentile_sorted(&v[..1], 0.99), 1.0);
        // 10 samples: p99 is the largest, as omni_client computes it.
        let w: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(percentile_sorted(&w, 0.99), 10.0);
        assert_eq!(percentile_sorted(&w, 0.5), 5.0);
    }

    #[test]
    fn summary_of_unsorted_samples() {
        let mut v = vec![3.0, 1.0, 2.0, 100.0];
        let s = summarize(&mut v);
        assert_eq!(s.n, 4);
        assert_eq!(s.median, 2.5);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 100.0);
        assert_eq!(s.p99, 100.0);
        assert_eq!(s.mean, 26.5);
        assert_eq!(summarize(&mut []), Summary::default());
    }
}
