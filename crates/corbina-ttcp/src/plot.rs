//! Figures in the style of the seed papers, with plotters: throughput against sender
//! buffer size per data type (one figure per invocation mode and direction, the socket
//! curve on each), latency against payload, latency against the number of objects. Each as
//! SVG and PNG (PNG needs a TrueType font: DejaVu Sans or Liberation Sans).

use std::error::Error;
use std::path::Path;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::experiments::TYPES;
use crate::record::{Record, CORBINA, OMNIORB, SOCKET};

/// One curve.
struct Series {
    name: String,
    color: RGBColor,
    points: Vec<(f64, f64)>,
    /// Thin line with cross markers (the peer), else a thick line.
    marked: bool,
}

/// One figure.
struct Figure {
    file: String,
    title: String,
    x_desc: String,
    y_desc: String,
    series: Vec<Series>,
}

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// Registers a TrueType font for text (ab_glyph has no system font lookup); false when
/// none is installed.
fn font() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| {
        let candidates = [
            "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
            "/usr/share/fonts/TTF/DejaVuSans.ttf",
            "/usr/share/fonts/dejavu/DejaVuSans.ttf",
            "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
            "/usr/share/fonts/liberation/LiberationSans-Regular.ttf",
        ];
        for c in candidates {
            if let Ok(bytes) = std::fs::read(c) {
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok() {
                    return true;
                }
            }
        }
        false
    })
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    fig: &Figure,
) -> Result<(), Box<dyn Error + 'static>>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let pts = fig.series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, 0f64, 0f64);
    for &(x, y) in pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    if !x0.is_finite() || x1 <= 0.0 {
        return Err("no data".into());
    }
    let (x0, x1) = (x0 / 1.3, x1 * 1.3);
    let mut chart = ChartBuilder::on(&root)
        .caption(&fig.title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d((x0..x1).log_scale(), 0f64..y1 * 1.1)?;
    chart
        .configure_mesh()
        .x_desc(fig.x_desc.as_str())
        .y_desc(fig.y_desc.as_str())
        .x_label_formatter(&|x| {
            if *x >= 1024.0 * 1024.0 && fig.x_desc.contains("bytes") {
                format!("{:.0}M", x / 1048576.0)
            } else if *x >= 1024.0 && fig.x_desc.contains("KB") {
                format!("{:.0}M", x / 1024.0)
            } else {
                format!("{x:.0}")
            }
        })
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()?;
    for s in &fig.series {
        let color = s.color;
        let style = if s.marked {
            color.stroke_width(1)
        } else {
            color.stroke_width(2)
        };
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), style))?
            .label(s.name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        if s.marked {
            chart.draw_series(s.points.iter().map(|&p| Cross::new(p, 4, color)))?;
        } else {
            chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 2, color.filled())))?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()?;
    root.present()?;
    Ok(())
}

fn series(name: String, color: RGBColor, marked: bool, mut points: Vec<(f64, f64)>) -> Series {
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    Series {
        name,
        color,
        points,
        marked,
    }
}

fn figures(records: &[Record]) -> Vec<Figure> {
    let tcp = |r: &&Record| r.transport == "tcp" && r.available;
    let static_inv = |r: &&Record| r.invocation.as_deref().is_none_or(|i| i == "static");
    let mut figs = Vec::new();
    let thr_of = |inv: &str, mode: &str, imp: &str, t: Option<&str>| -> Vec<(f64, f64)> {
        records
            .iter()
            .filter(tcp)
            .filter(|r| r.experiment == "throughput" && r.implementation == imp)
            .filter(|r| r.invocation.as_deref().is_none_or(|i| i == inv))
            .filter(|r| r.mode.as_deref() == Some(mode))
            .filter(|r| t.is_none() || r.data_type.as_deref() == t)
            .filter_map(|r| Some((r.buf_kb? as f64, r.mbit_s?)))
            .collect()
    };
    for (inv, what) in [
        ("dii", "DII, a new request per call"),
        ("dii_reuse", "DII, one request reused"),
        ("dsi", "DSI server"),
    ] {
        for mode in ["oneway", "twoway"] {
            let mut s = Vec::new();
            for (i, t) in TYPES.iter().enumerate() {
                let p = thr_of(inv, mode, CORBINA, Some(t));
                if !p.is_empty() {
                    s.push(series(format!("{inv} {t}"), COLORS[i], false, p));
                    let st = thr_of("static", mode, CORBINA, Some(t));
                    s.push(series(format!("static {t}"), COLORS[i], true, st));
                }
            }
            if s.is_empty() {
                continue;
            }
            let p = thr_of(inv, mode, SOCKET, None);
            if !p.is_empty() {
                s.push(series("raw socket".into(), BLACK, false, p));
            }
            figs.push(Figure {
                file: format!("throughput_{inv}_{mode}"),
                title: format!("Throughput, {what}, {mode}"),
                x_desc: "sender buffer (KB)".into(),
                y_desc: "Mbit/s (receiver's count)".into(),
                series: s,
            });
        }
    }
    for mode in ["oneway", "twoway"] {
        let thr = |imp: &str, t: Option<&str>| -> Vec<(f64, f64)> {
            records
                .iter()
                .filter(tcp)
                .filter(static_inv)
                .filter(|r| r.experiment == "throughput" && r.implementation == imp)
                .filter(|r| r.mode.as_deref() == Some(mode))
                .filter(|r| t.is_none() || r.data_type.as_deref() == t)
                .filter_map(|r| Some((r.buf_kb? as f64, r.mbit_s?)))
                .collect()
        };
        let mut s = Vec::new();
        for (i, t) in TYPES.iter().enumerate() {
            let p = thr(CORBINA, Some(t));
            if !p.is_empty() {
                s.push(series(format!("corbina {t}"), COLORS[i], false, p));
            }
        }
        for (i, t) in TYPES.iter().enumerate() {
            let p = thr(OMNIORB, Some(t));
            if !p.is_empty() {
                s.push(series(format!("omniORB {t}"), COLORS[i], true, p));
            }
        }
        let p = thr(SOCKET, None);
        if !p.is_empty() {
            s.push(series("raw socket".into(), BLACK, false, p));
        }
        figs.push(Figure {
            file: format!("throughput_static_{mode}"),
            title: format!("Throughput, static invocation, {mode}"),
            x_desc: "sender buffer (KB)".into(),
            y_desc: "Mbit/s (receiver's count)".into(),
            series: s,
        });
    }
    let mut s = Vec::new();
    for (i, (imp, t)) in [
        (CORBINA, "octet"),
        (CORBINA, "struct"),
        (SOCKET, "octet"),
        (SOCKET, "struct"),
    ]
    .into_iter()
    .enumerate()
    {
        let p: Vec<(f64, f64)> = records
            .iter()
            .filter(tcp)
            .filter(static_inv)
            .filter(|r| r.experiment == "latency" && r.implementation == imp)
            .filter(|r| r.data_type.as_deref() == Some(t))
            .filter_map(|r| Some((r.size? as f64, r.median_us?)))
            .collect();
        if !p.is_empty() {
            let name = if imp == SOCKET {
                format!("socket, {t} sizes")
            } else {
                format!("{imp} sequence<{t}>")
            };
            s.push(series(name, COLORS[i], imp == SOCKET, p));
        }
    }
    figs.push(Figure {
        file: "latency_payload".into(),
        title: "Twoway latency against payload (median)".into(),
        x_desc: "payload bytes".into(),
        y_desc: "round trip, µs".into(),
        series: s,
    });
    let mut s = Vec::new();
    for (i, (imp, order)) in [
        (CORBINA, "request_train"),
        (CORBINA, "round_robin"),
        (OMNIORB, "request_train"),
        (OMNIORB, "round_robin"),
    ]
    .into_iter()
    .enumerate()
    {
        let p: Vec<(f64, f64)> = records
            .iter()
            .filter(tcp)
            .filter(static_inv)
            .filter(|r| r.experiment == "scalability" && r.implementation == imp)
            .filter(|r| r.mode.as_deref() == Some(order))
            .filter_map(|r| Some((r.objects? as f64, r.median_us?)))
            .collect();
        if !p.is_empty() {
            s.push(series(
                format!("{imp} {order}"),
                COLORS[i],
                imp == OMNIORB,
                p,
            ));
        }
    }
    figs.push(Figure {
        file: "latency_objects".into(),
        title: "Null twoway latency against objects in the server (median)".into(),
        x_desc: "objects".into(),
        y_desc: "round trip, µs".into(),
        series: s,
    });
    figs.retain(|f| !f.series.is_empty());
    figs
}

/// Writes every figure the records allow into `dir` as SVG and PNG; returns the files.
pub fn plot_all(records: &[Record], dir: &Path) -> Result<Vec<String>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if !font() {
        return Err("no TrueType font found (apt-get install fonts-dejavu-core)".into());
    }
    let mut files = Vec::new();
    for f in figures(records) {
        let svg = dir.join(format!("{}.svg", f.file));
        draw(SVGBackend::new(&svg, (800, 520)).into_drawing_area(), &f)
            .map_err(|e| format!("{}: {e}", svg.display()))?;
        files.push(svg.display().to_string());
        let png = dir.join(format!("{}.png", f.file));
        draw(BitMapBackend::new(&png, (800, 520)).into_drawing_area(), &f)
            .map_err(|e| format!("{}: {e}", png.display()))?;
        files.push(png.display().to_string());
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plots_are_written_when_a_font_exists() {
        let mut records = Vec::new();
        for (imp, t) in [(CORBINA, "octet"), (SOCKET, "bytes")] {
            for kb in [1u64, 4, 16] {
                let mut r = Record::new("throughput", imp).mode("oneway").data_type(t);
                r.buf_kb = Some(kb);
                r.mbit_s = Some(kb as f64 * 100.0);
                records.push(r);
            }
        }
        let dir = std::env::temp_dir().join(format!("ttcp-plot-{}", std::process::id()));
        match plot_all(&records, &dir) {
            Ok(files) => {
                assert_eq!(files.len(), 2);
                let svg = std::fs::read_to_string(&files[0]).unwrap();
                assert!(svg.contains("<svg") && svg.contains("corbina octet"));
            }
            Err(e) => assert!(e.contains("font"), "{e}"),
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
