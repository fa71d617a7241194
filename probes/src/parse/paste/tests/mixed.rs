//! Pastes as people make them: several outputs with prose around them; and the negative controls.

use super::*;
use gpu_doctor_model::{ComputeCapability, CudaVersion};

#[test]
fn support_thread_post_gives_every_part_and_the_messages() {
    let s = read(SUPPORT_THREAD);
    assert_eq!(formats(&s), ["error messages", "nvidia-smi table", "collect_env"]);
    let d = s.driver.value().unwrap();
    assert_eq!((d.version.as_str(), d.cuda_version), ("570.133.07", Some(CudaVersion::new(12, 8))));
    assert!(matches!(&s.driver, Probed::Found { source, .. } if source == "pasted collect_env + nvidia-smi table"));
    let g = gpus(&s);
    assert_eq!(g.len(), 1, "collect_env said `No CUDA`; the table lists the GPU");
    assert_eq!(g[0].name.as_deref(), Some("NVIDIA GeForce RTX 4090"));
    assert_eq!(g[0].compute_capability, None, "not stated in the text");
    assert_eq!(g[0].pci_bus_id.as_deref(), Some("0000:01:00.0"));
    let torch = framework(&s, "torch");
    assert_eq!((torch.version.as_str(), &torch.build), ("2.9.0.dev20250901+cu130", &cuda("13.0")));
    let t = env(&s).deep.as_ref().unwrap().value().unwrap().torch.clone().unwrap();
    assert_eq!(t.cuda_available, Some(false));
    assert!(is_unknown(&s.toolkits), "`CUDA runtime version: No CUDA`");
    let cudnn = s.cudnn.value().unwrap();
    assert_eq!(cudnn.len(), 1, "`cuDNN version: No CUDA`; the one copy is the pip wheel");
    assert_eq!((cudnn[0].cuda_major, cudnn[0].version.unwrap().to_string()), (Some(13), "9.13.0".to_owned()));
    assert_eq!(
        ids(&s),
        ["torch.driver_too_old", "torch.driver_too_old"],
        "the warning and the traceback are two lines"
    );
    assert!(s.messages.iter().all(|m| m.values.get("found_version").map(String::as_str) == Some("12080")));
    assert!(s.messages[0].line.starts_with("/home/ana/.venv/lib/python3.12/site-packages/torch/cuda/__init__.py:182"));
}

#[test]
fn found_version_gives_the_drivers_cuda_only_when_the_driver_is_known() {
    let warning =
        "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 12080).";
    let s = read(warning);
    assert_eq!(formats(&s), ["error messages"]);
    assert!(is_unknown(&s.driver), "the driver's version is not said");
    let with_driver = format!("{}\n{warning}\n", COLLECT_ENV_CU124);
    let s = read(&with_driver);
    let d = s.driver.value().unwrap();
    assert_eq!((d.version.as_str(), d.cuda_version), ("550.90.07", Some(CudaVersion::new(12, 8))));
    assert!(matches!(&s.driver, Probed::Found { source, .. } if source == "pasted collect_env + error messages"));
}

#[test]
fn a_torch_capability_warning_names_a_gpu_with_its_capability() {
    let text = "UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n";
    let s = read(text);
    let g = &gpus(&s)[0];
    assert_eq!(g.name.as_deref(), Some("NVIDIA GeForce RTX 5090"));
    assert_eq!(g.compute_capability, Some(ComputeCapability { major: 12, minor: 0 }));
    assert_eq!(g.architecture.as_deref(), Some("Blackwell"));
    assert_eq!(s.gpus, read(&format!("{text}{text}")).gpus, "the same fact twice is one GPU");
}

#[test]
fn the_same_gpu_from_collect_env_and_nvidia_smi_is_one_gpu() {
    let s = read(HEALTHY);
    let g = gpus(&s);
    assert_eq!(g.len(), 1);
    assert_eq!((g[0].name.as_deref(), g[0].pci_bus_id.as_deref()), (Some("NVIDIA RTX A4000"), Some("0000:65:00.0")));
    assert_eq!(s.gpus, read(&format!("{HEALTHY}\n{HEALTHY}")).gpus);
}

#[test]
fn healthy_paste_gives_facts_and_no_messages() {
    let s = read(HEALTHY);
    assert_eq!(formats(&s), ["collect_env", "nvidia-smi table"]);
    assert!(s.messages.is_empty());
    assert_eq!(s.driver.value().unwrap().cuda_version, Some(CudaVersion::new(12, 2)));
    assert_eq!(framework(&s, "torch").build, cuda("12.1"));
}

#[test]
fn formats_are_listed_in_the_order_first_seen() {
    let s = read(&format!("{PIP_LIST}\n\n{SMI_Q}\n\n{COLLECT_ENV_OLD}"));
    assert_eq!(formats(&s), ["pip list", "nvidia-smi -q", "collect_env"]);
    let s = read(&format!("{COLLECT_ENV_OLD}\n\n{SMI_Q}\n\n{PIP_LIST}"));
    assert_eq!(formats(&s), ["collect_env", "nvidia-smi -q", "pip list"]);
}

#[test]
fn quoted_fenced_and_crlf_pastes_read_the_same() {
    for sample in SAMPLES {
        let plain = read(sample);
        let quoted: String = sample.lines().map(|l| format!("> {l}\r\n")).collect();
        assert_eq!(read(&format!("```\r\n{quoted}```\r\n")), plain);
    }
}

#[test]
fn prose_without_gpu_content_is_answered_and_only_empty_or_binary_text_is_an_error() {
    for text in [
        "Hi all,\n\nmy training loop is slow and I don't know why. Any ideas? I use a laptop.\n\nThanks, Ana",
        "PyTorch version: I think it is the latest one.",
        "```\nls -la\ntotal 0\n```",
    ] {
        let s = read_pasted(text, kb()).unwrap_or_else(|e| panic!("{text:?} refused: {e}"));
        assert!(s.notes.iter().any(|n| n.starts_with("nothing gpu-doctor recognises")), "{text:?}: {:?}", s.notes);
        assert_eq!(s.origin, gpu_doctor_model::Origin::Pasted { formats: vec![] }, "{text:?}");
        assert_eq!(crate::parse::paste::next_paste(&s, &[]), Some(crate::parse::paste::COLLECT_ENV), "{text:?}");
    }
    // A GPU named in a sentence is read (gpu_words), and only that.
    let s = read_pasted("The GPU is an RTX 4090 and the driver is recent.", kb()).unwrap();
    assert_eq!(s.origin, gpu_doctor_model::Origin::Pasted { formats: vec!["a GPU named in words".to_owned()] });
    assert_eq!(s.gpus.value().unwrap()[0].name.as_deref(), Some("RTX 4090"));
    for (text, why) in [
        ("", "the text is empty"),
        ("   \n\n", "the text is empty"),
        ("\u{0}\u{1}ELF\u{2}\u{0}", "the text is binary"),
        ("\u{fffd}\u{fffd}\u{fffd}x\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}", "the text is binary"),
    ] {
        let e = read_pasted(text, kb()).unwrap_err().to_string();
        assert!(e.contains(why), "{text:?}: {e}");
    }
}

#[test]
fn every_part_the_text_does_not_cover_stays_unknown() {
    let s = read(PIP_FREEZE);
    for (part, unknown) in [
        ("system", is_unknown(&s.system)),
        ("driver", is_unknown(&s.driver)),
        ("kernel_module", is_unknown(&s.kernel_module)),
        ("secure_boot", is_unknown(&s.secure_boot)),
        ("pci_devices", is_unknown(&s.pci_devices)),
        ("gpus", is_unknown(&s.gpus)),
        ("links", is_unknown(&s.links)),
        ("toolkits", is_unknown(&s.toolkits)),
    ] {
        assert!(unknown, "{part}");
    }
    assert_eq!(s.platform.platform.os, gpu_doctor_model::OsFamily::Unknown);
}

#[test]
fn a_framework_fact_gives_a_capability_to_every_gpu_of_that_name_but_a_bus_id_to_one() {
    let log = "I tensorflow/core/common_runtime/gpu/gpu_device.cc:1120] Creating TensorFlow device \
        (/device:GPU:0 with 10470 MB memory) -> physical GPU (device: 0, name: GeForce GTX 1080 Ti, pci bus id: 0000:02:00.0, compute capability: 6.1)";
    let s = read(&format!("{COLLECT_ENV_OLD}\n{log}\n"));
    let g = gpus(&s);
    assert_eq!(g.len(), 4);
    assert!(g.iter().all(|g| g.compute_capability == Some(ComputeCapability { major: 6, minor: 1 })));
    assert!(g.iter().all(|g| g.pci_bus_id.is_none()), "four GPUs share the name");
    assert!(g.iter().all(|g| g.architecture.as_deref() == Some("Pascal")));
}
