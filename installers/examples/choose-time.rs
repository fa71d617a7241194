//! The time to choose a build: `cargo run --release -p gpu-doctor-installers --example choose-time`.
//! Chooses for each framework on a few machines (the knowledge base parsed once, as the app does),
//! many times over, and prints the slowest single choice and the mean.

use std::time::{Duration, Instant};

use gpu_doctor_installers::choose::{Framework, Machine, Want, choose};
use gpu_doctor_kb::Kb;
use gpu_doctor_model::OsFamily;

fn machine(gpus: &[(u32, u32)], driver: &str, python: (u32, u32)) -> Machine {
    Machine {
        gpus: gpus.iter().map(|&(major, minor)| gpu_doctor_model::ComputeCapability { major, minor }).collect(),
        driver_cuda: None,
        driver_version: Some(driver.to_owned()),
        python: Some(python),
        os: OsFamily::Linux,
        cpu: "x86_64".into(),
        toolkits: Vec::new(),
    }
}

fn main() {
    let start = Instant::now();
    let Ok(kb) = Kb::get() else {
        eprintln!("the knowledge base did not load");
        std::process::exit(1);
    };
    let load = start.elapsed();
    let machines = [
        machine(&[(8, 9)], "550.54.14", (3, 10)),
        machine(&[(12, 0), (8, 6)], "575.57.08", (3, 12)),
        machine(&[(6, 1)], "580.95.05", (3, 14)),
        machine(&[(9, 0); 8], "520.61.05", (3, 11)),
    ];
    let rounds = 200_u32;
    let (mut total, mut slowest, mut count) = (Duration::ZERO, Duration::ZERO, 0_u32);
    for _ in 0..rounds {
        for m in &machines {
            for framework in Framework::ALL {
                let want = Want { framework, keep_line: Some("2.5".into()), wheelhouse: None };
                let t = Instant::now();
                let choice = choose(kb, m, &want);
                let took = t.elapsed();
                std::hint::black_box(choice);
                total += took;
                slowest = slowest.max(took);
                count += 1;
            }
        }
    }
    println!("knowledge base parsed in {:.1} ms (once per process)", load.as_secs_f64() * 1e3);
    println!(
        "{count} choices: mean {:.3} ms, slowest {:.3} ms",
        total.as_secs_f64() * 1e3 / f64::from(count),
        slowest.as_secs_f64() * 1e3
    );
}
