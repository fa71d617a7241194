//! PaddlePaddle's environment summary, `python tools/summary_env.py` (PaddlePaddle/Paddle
//! tools/summary_env.py, which its issue templates ask for):
//!
//! ```text
//! Paddle version: 2.2.1
//! Paddle With CUDA: False
//!
//! OS: Ubuntu 20.04
//! ...
//! Nvidia driver version: 495.44
//! ```
//! `Paddle With CUDA` is `paddle.base.core.is_compiled_with_cuda()` (`paddle.fluid.core` before 2.5):
//! False is the CPU package, `paddlepaddle`; True the GPU one, `paddlepaddle-gpu`. The OS, Python and
//! driver lines are labelled lines, which that reader takes.

use super::facts::Facts;
use super::packages;

const FORMAT: &str = "PaddlePaddle summary_env";

/// Reads `Paddle version:` with the `Paddle With CUDA:` line right after it.
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    let value = |line: &str, key: &str| line.trim().strip_prefix(key).map(str::trim).map(str::to_owned);
    let Some((at, version)) = lines.iter().enumerate().find_map(|(i, l)| Some((i, value(l, "Paddle version:")?)))
    else {
        return;
    };
    let Some(with_cuda) = lines.get(at + 1).and_then(|l| value(l, "Paddle With CUDA:")) else { return };
    let name = match with_cuda.as_str() {
        "True" => "paddlepaddle-gpu",
        "False" => "paddlepaddle",
        _ => return,
    };
    // `N/A` or `None` when paddle did not import.
    if !version.starts_with(|c: char| c.is_ascii_digit()) || version.contains(' ') {
        return;
    }
    facts.saw(at, FORMAT);
    packages::add(facts, name, &version, None, FORMAT);
}

#[cfg(test)]
mod tests {
    use super::super::read_pasted;

    /// summary_env's block in the lines tools/summary_env.py's template prints (the values an example's).
    #[test]
    fn summary_env_gives_the_package_of_the_build() {
        let kb = gpu_doctor_kb::Kb::get().unwrap();
        let block = |with_cuda: &str| {
            format!(
                "Paddle version: 2.4.2\nPaddle With CUDA: {with_cuda}\n\nOS: ubuntu 20.04\nPython version: 3.8.16\n\n\
                 CUDA version: 11.7.99\ncuDNN version: 8.4.1\nNvidia driver version: 515.65.01\n"
            )
        };
        let names = |text: &str| -> Vec<(String, String)> {
            let snap = read_pasted(text, kb).unwrap();
            snap.python_envs
                .value()
                .into_iter()
                .flatten()
                .flat_map(|e| e.frameworks.iter().map(|f| (f.name.clone(), f.version.clone())))
                .collect()
        };
        assert_eq!(names(&block("False")), [("paddlepaddle".to_owned(), "2.4.2".to_owned())]);
        assert_eq!(names(&block("True")), [("paddlepaddle-gpu".to_owned(), "2.4.2".to_owned())]);
        // Paddle did not import: `N/A` (2.5 and later) or `None`; nothing to read.
        assert!(names("Paddle version: N/A\nPaddle With CUDA: N/A\n").is_empty());
        assert!(names("Paddle version: None\nPaddle With CUDA: None\n").is_empty());
    }
}
