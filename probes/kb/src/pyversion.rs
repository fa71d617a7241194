//! A Python package's version as pip, conda and `__version__` print it (PEP 440): its release
//! numbers, its release line and its local label. The one reader of such versions; the probes,
//! the paste reader, the rules and the chooser all ask it.
//!
//! Source: <https://packaging.python.org/en/latest/specifications/version-specifiers/>
//! (`[N!]N(.N)*[{a|b|rc}N][.postN][.devN][+local]`).

/// A package version's text, read on demand: `2.5.1+cu124`, `0.22.0.dev20250301`, `2.10.0rc1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PyVersion<'a> {
    text: &'a str,
}

impl<'a> PyVersion<'a> {
    /// The version in `text` (surrounding space ignored); any text is accepted, the queries say
    /// what it holds.
    pub fn new(text: &'a str) -> Self {
        Self { text: text.trim() }
    }

    /// The public part, without the local label: `2.5.1` of `2.5.1+cu124`.
    pub fn public(&self) -> &'a str {
        self.text.split_once('+').map_or(self.text, |(p, _)| p)
    }

    /// The local label after `+`: `cu124` of `2.5.1+cu124`, `cuda12.cudnn89` of jaxlib's
    /// `0.4.7+cuda12.cudnn89`; `None` without one.
    pub fn local(&self) -> Option<&'a str> {
        self.text.split_once('+').map(|(_, l)| l)
    }

    /// The leading release numbers: `2.5.1+cu124` → [2, 5, 1], `0.22.0.dev20250301` → [0, 22, 0],
    /// `2.10.0rc1` → [2, 10]: the dot parts that are whole numbers, up to the first that is not.
    pub fn numbers(&self) -> Vec<u32> {
        self.public().split('.').map_while(|p| p.parse().ok()).collect()
    }

    /// The release line, major and minor: `2.5` of `2.5.1+cu124`, `2.10` of `2.10.0rc1`, `2.6` of
    /// `2.6.0.dev20241112`; `None` when the version does not start with two numbers.
    pub fn line(&self) -> Option<String> {
        let base = self.public().split(['a', 'b', 'r', 'd']).next()?;
        let mut parts = base.split('.');
        let (major, minor) = (parts.next()?, parts.next()?);
        (major.parse::<u32>().is_ok() && minor.parse::<u32>().is_ok()).then(|| format!("{major}.{minor}"))
    }

    /// Whether the public part holds a letter: a pre-release, development or post release
    /// (`2.6.0a0`, `2.6.0.dev20241112`), or not a version at all.
    pub fn is_pre_or_dev(&self) -> bool {
        self.public().contains(|c: char| c.is_ascii_alphabetic())
    }
}

#[cfg(test)]
mod tests {
    use super::PyVersion;

    fn v(text: &str) -> PyVersion<'_> {
        PyVersion::new(text)
    }

    #[test]
    fn public_part_and_local_label() {
        assert_eq!((v("2.5.1+cu124").public(), v("2.5.1+cu124").local()), ("2.5.1", Some("cu124")));
        assert_eq!(v("0.4.7+cuda12.cudnn89").local(), Some("cuda12.cudnn89"));
        assert_eq!(v("2.3.0+cpu").local(), Some("cpu"));
        assert_eq!((v(" 2.3.0 ").public(), v("2.3.0").local()), ("2.3.0", None));
        assert_eq!(v("2.3.0+").local(), Some(""));
    }

    #[test]
    fn release_numbers_stop_at_the_first_part_that_is_not_a_number() {
        assert_eq!(v("2.5.1+cu124").numbers(), [2, 5, 1]);
        assert_eq!(v("0.22.0.dev20250301").numbers(), [0, 22, 0]);
        assert_eq!(v("0.4.36.dev1").numbers(), [0, 4, 36]);
        assert_eq!(v("2.10.0rc1").numbers(), [2, 10]);
        assert_eq!(v("2.18").numbers(), [2, 18]);
        assert!(v("x").numbers().is_empty());
        assert!(v("2.10.0").numbers() > v("2.9.1").numbers());
    }

    #[test]
    fn release_lines() {
        assert_eq!(v("2.5.1+cu124").line().as_deref(), Some("2.5"));
        assert_eq!(v("2.10.0").line().as_deref(), Some("2.10"));
        assert_eq!(v("2.10.0rc1").line().as_deref(), Some("2.10"));
        assert_eq!(v("2.6.0.dev20241112").line().as_deref(), Some("2.6"));
        assert_eq!(v("2.5b1").line().as_deref(), Some("2.5"));
        assert_eq!(v("2").line(), None);
        assert_eq!(v("x"), PyVersion::new("x"));
        assert_eq!(v("x").line(), None);
    }

    #[test]
    fn pre_and_dev_releases_hold_a_letter() {
        assert!(v("2.6.0.dev20241112+cu124").is_pre_or_dev());
        assert!(v("2.6.0a0").is_pre_or_dev());
        assert!(!v("2.5.1+cu124").is_pre_or_dev());
    }
}
