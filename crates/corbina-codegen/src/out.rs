//! A tiny indenting writer for generated source.

/// Generated Rust source under construction, four spaces per level.
#[derive(Default)]
pub struct Out {
    buf: String,
    indent: usize,
}

impl Out {
    /// Writes one line at the current indentation (an empty string writes a blank line).
    pub fn line(&mut self, s: impl AsRef<str>) {
        let s = s.as_ref();
        for l in s.split('\n') {
            if !l.is_empty() {
                for _ in 0..self.indent {
                    self.buf.push_str("    ");
                }
                self.buf.push_str(l);
            }
            self.buf.push('\n');
        }
    }

    /// Writes `s {` and indents.
    pub fn open(&mut self, s: impl AsRef<str>) {
        self.line(format!("{} {{", s.as_ref()));
        self.indent += 1;
    }

    /// Dedents and writes `}`.
    pub fn close(&mut self) {
        self.close_with("");
    }

    /// Dedents and writes `}` followed by `suffix` (`,`, `;`, `)`…).
    pub fn close_with(&mut self, suffix: &str) {
        self.indent = self.indent.saturating_sub(1);
        self.line(format!("}}{suffix}"));
    }

    /// Indents one more level (after a `} else {` written with `close_with`).
    pub fn indent_more(&mut self) {
        self.indent += 1;
    }

    /// Dedents and writes `s` (closing a bracket opened with a plain line).
    pub fn dedent_line(&mut self, s: impl AsRef<str>) {
        self.indent = self.indent.saturating_sub(1);
        self.line(s);
    }

    /// A blank line, unless the previous line is blank or opens a block.
    pub fn blank(&mut self) {
        if !(self.buf.is_empty() || self.buf.ends_with("\n\n") || self.buf.ends_with("{\n")) {
            self.buf.push('\n');
        }
    }

    /// The source text.
    pub fn finish(mut self) -> String {
        while self.buf.ends_with("\n\n") {
            self.buf.pop();
        }
        self.buf
    }
}
