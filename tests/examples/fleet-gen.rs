//! Writes a synthetic fleet for measuring `gpu-doctor compare` (see `gpu_doctor_tests::fleet`):
//! `cargo run --release -p gpu-doctor-tests --example fleet-gen -- DIR N` gives N node reports
//! (one of each perturbation among them when N ≥ 7) and a `fleet.json` in DIR.

use gpu_doctor_tests::fleet::{Perturbation, base_snapshot, fleet, write};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(dir), Some(n)) = (args.next(), args.next()) else {
        return Err("usage: fleet-gen DIR N".into());
    };
    let n: usize = n.parse()?;
    // Spread the perturbations over the fleet, one of each.
    let perturbed: Vec<(usize, Perturbation)> = if n >= Perturbation::ALL.len() {
        Perturbation::ALL.iter().enumerate().map(|(k, p)| (k * n / Perturbation::ALL.len() + 1, *p)).collect()
    } else {
        Vec::new()
    };
    write(std::path::Path::new(&dir), &fleet(&base_snapshot(), n, &perturbed))?;
    Ok(())
}
