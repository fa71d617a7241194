//! CUDA_VISIBLE_DEVICES and CUDA_LAUNCH_BLOCKING.

use super::builder::Machine;
use gpu_doctor_model::Change;

fn set(name: &str, value: &str) -> Vec<Change> {
    vec![Change::SetVar { name: name.into(), value: value.into() }]
}

fn unset(name: &str) -> Change {
    Change::UnsetVar { name: name.into() }
}

/// Two GPUs with known UUIDs.
fn two_gpus() -> Machine {
    Machine::linux()
        .gpu("NVIDIA RTX A6000", "8.6")
        .gpu_with(|g| g.uuid = Some("GPU-aaaa1111-0000-0000-0000-000000000000".into()))
        .gpu("NVIDIA RTX A6000", "8.6")
        .gpu_with(|g| g.uuid = Some("GPU-bbbb2222-0000-0000-0000-000000000000".into()))
}

fn visible(value: &str) -> Machine {
    two_gpus().env("CUDA_VISIBLE_DEVICES", value)
}

const HIDES_ALL: &str = "env.cuda_visible_devices_hides_all";
const UNKNOWN: &str = "env.cuda_visible_devices_unknown_device";
const FORM: &str = "env.cuda_visible_devices_form";

#[test]
fn every_value_gives_exactly_its_finding() {
    let none: &[&str] = &[];
    let cases: &[(&str, &[&str])] = &[
        ("0", none),
        ("1", none),
        ("1,0", none),
        ("GPU-aaaa", none),
        ("GPU-bbbb2222-0000-0000-0000-000000000000", none),
        ("MIG-5c9d4ab1-ae7e-5d1c-9d60-bd2b5e6b7f34", none),
        ("0,-1,1", none),
        ("", &[HIDES_ALL]),
        ("-1", &[HIDES_ALL]),
        ("NoDevFiles", &[HIDES_ALL]),
        ("2", &[HIDES_ALL]),
        ("GPU-cccc", &[HIDES_ALL]),
        ("GPU-", &[HIDES_ALL]),
        ("cuda:0", &[HIDES_ALL]),
        ("GPU0", &[HIDES_ALL]),
        ("[0,1]", &[HIDES_ALL]),
        ("0,2", &[UNKNOWN]),
        ("0,2,1", &[UNKNOWN]),
        ("1,GPU-cccc", &[UNKNOWN]),
        ("0,cuda:1", &[FORM]),
        ("0, 1", &[FORM]),
        (" 0", &[FORM]),
        ("0-1", &[FORM]),
        ("0,", &[FORM]),
    ];
    for (value, want) in cases {
        let want: Vec<String> = want.iter().map(|s| (*s).to_owned()).collect();
        assert_eq!(visible(value).ids(), want, "CUDA_VISIBLE_DEVICES={value:?}");
    }
    assert_eq!(two_gpus().ids(), Vec::<String>::new(), "unset");
}

#[test]
fn fixes_give_the_value_meant() {
    let changes = |value: &str, id: &str| visible(value).changes(id);
    const VAR: &str = "CUDA_VISIBLE_DEVICES";
    assert_eq!(changes("2", HIDES_ALL), [unset(VAR)]);
    assert!(visible("2").finding(HIDES_ALL).detail.ends_with("to keep a list, set it to 0,1."));
    assert!(visible("cuda:1").finding(HIDES_ALL).detail.ends_with("to keep a list, set it to 1."));
    let slurm = changes("NoDevFiles", HIDES_ALL);
    assert!(matches!(&slurm[..], [_, Change::Manual { text }] if text.contains("--gpus=1")), "{slurm:?}");
    assert_eq!(changes("0,2,1", UNKNOWN), set(VAR, "0,1"));
    assert_eq!(changes("0, 1", FORM), set(VAR, "0,1"));
    assert_eq!(changes("0-1", FORM), set(VAR, "0,1"));
    assert_eq!(changes("0,cuda:1", FORM), set(VAR, "0,1"));
    let f = visible("0,2,1").finding(UNKNOWN);
    assert!(f.summary.contains("index 2") && f.detail.contains("the entry after it is ignored"), "{f:#?}");
    assert!(f.evidence.iter().any(|e| e.contains("2 GPU(s)")), "{:?}", f.evidence);
    let f = visible("2").finding(HIDES_ALL);
    assert!(f.detail.contains("index 2"), "{f:#?}");
}

#[test]
fn without_the_gpu_list_only_the_form_is_judged() {
    let pasted = |value: &str| Machine::pasted().env("CUDA_VISIBLE_DEVICES", value);
    assert_eq!(pasted("cuda:0").ids(), vec![FORM.to_owned()]);
    assert_eq!(pasted("cuda:0").changes(FORM), set("CUDA_VISIBLE_DEVICES", "0"));
    for value in ["", "-1", "7", "GPU-cccc", "NoDevFiles"] {
        assert_eq!(pasted(value).ids(), Vec::<String>::new(), "{value:?}");
    }
    // UUIDs cannot be checked when the driver did not report them.
    let no_uuids = Machine::linux().gpu("NVIDIA RTX A6000", "8.6").env("CUDA_VISIBLE_DEVICES", "GPU-cccc");
    assert_eq!(no_uuids.ids(), Vec::<String>::new());
}

/// Grace9994/CoMoSVC#6, thuml/Time-Series-Library#10: a script sets an index of 1 or more on a one-GPU machine
/// and the program says it saw no GPU. Without the GPU list that is the likely cause; index 0 is not suspect,
/// nor is a CPU build's `is_available()` False.
#[test]
fn without_the_gpu_list_an_index_past_0_and_no_device_seen_is_the_likely_cause() {
    let pasted = |value: &str| Machine::pasted().env("CUDA_VISIBLE_DEVICES", value);
    let none_counted = |value: &str| pasted(value).deep_torch(|t| t.device_count = Some(0));
    assert_eq!(none_counted("1").ids(), vec![HIDES_ALL.to_owned()]);
    assert_eq!(none_counted("2,3").ids(), vec![HIDES_ALL.to_owned()]);
    assert_eq!(none_counted("0").ids(), Vec::<String>::new());
    assert_eq!(none_counted("-1").ids(), Vec::<String>::new(), "-1 hides on purpose");
    let unavailable = |cuda: Option<&str>| {
        pasted("1").deep_torch(|t| {
            t.cuda_available = Some(false);
            t.cuda = cuda.map(str::to_owned);
        })
    };
    assert_eq!(unavailable(Some("11.3")).ids(), vec![HIDES_ALL.to_owned()]);
    let printed = |version: &str| {
        pasted("1").deep_torch(|t| {
            t.cuda_available = Some(false);
            t.version = Some(version.to_owned());
        })
    };
    assert_eq!(printed("2.1.0+cpu").ids(), Vec::<String>::new(), "a CPU build is not available anyway");
    // A script sets 1 and `torch.cuda.is_available()` printed False with no build shown: the likely cause all
    // the same.
    assert_eq!(unavailable(None).ids(), vec![HIDES_ALL.to_owned()]);
    // TensorFlow's cuInit failing with CUDA_ERROR_NO_DEVICE (stream_executor cuda_driver.cc) says the same;
    // another cuInit error (the driver not usable) does not.
    let tf = |error: &str| {
        let mut m = pasted("1");
        m.0.messages.push(gpu_doctor_model::ObservedMessage {
            id: "tf.cuinit_failed".into(),
            line: format!("E tensorflow/stream_executor/cuda/cuda_driver.cc:271] failed call to cuInit: {error}"),
            values: [("error".to_owned(), error.to_owned())].into_iter().collect(),
        });
        m
    };
    assert!(tf("CUDA_ERROR_NO_DEVICE").ids().contains(&HIDES_ALL.to_owned()));
    assert!(!tf("UNKNOWN ERROR (303)").ids().contains(&HIDES_ALL.to_owned()));
    let f = none_counted("1").finding(HIDES_ALL);
    assert!(f.summary.contains("probably") && f.evidence.iter().any(|e| e.contains("device_count() is 0")), "{f:#?}");
    let changes = none_counted("1").changes(HIDES_ALL);
    assert!(
        matches!(&changes[..], [c, Change::Manual { text }] if *c == unset("CUDA_VISIBLE_DEVICES") && text.contains("nvidia-smi -L")),
        "{changes:?}"
    );
}

/// A pasted "No CUDA GPUs are available" (PyTorch's device_count_ensure_non_zero, c10/cuda/CUDAFunctions.cpp).
fn no_gpus_message(m: &mut Machine) {
    m.0.messages.push(gpu_doctor_model::ObservedMessage {
        id: "torch.no_gpus_available".into(),
        line: "RuntimeError: No CUDA GPUs are available".into(),
        values: Default::default(),
    });
}

/// mazurowski-lab/finetune-SAM#18 and KeYang8/WITT#34: the value is not in the text, but PyTorch saw the GPU in a
/// plain shell while the project's script counted none; and (finetune-SAM#18) the program was started by a shell
/// script. Either points at the variable the script or config sets; a container, WSL, or no such sign do not.
#[test]
fn no_gpu_for_the_program_alone_points_at_the_variable_where_it_starts() {
    let hides = |m: &Machine| m.ids().contains(&HIDES_ALL.to_owned());
    let base = || {
        let mut m = Machine::pasted();
        no_gpus_message(&mut m);
        m
    };
    let seen_in_shell = base().deep_torch(|t| t.cuda_available = Some(true));
    assert!(hides(&seen_in_shell));
    let f = seen_in_shell.finding(HIDES_ALL);
    assert!(f.evidence.iter().any(|e| e.contains("is_available() is True")), "{f:#?}");
    assert!(matches!(&seen_in_shell.changes(HIDES_ALL)[..], [Change::SetVar { name, value }, Change::Manual { text }]
        if name == "CUDA_VISIBLE_DEVICES" && value == "0" && text.contains("grep -rn CUDA_VISIBLE_DEVICES")));
    let counted = base().deep_torch(|t| t.device_count = Some(2));
    assert!(hides(&counted));

    let mut by_script = base();
    by_script.0.env.launch_scripts.push("train_singlegpu_demo.sh".into());
    assert!(hides(&by_script));
    let changes = by_script.changes(HIDES_ALL);
    assert!(
        matches!(&changes[..], [_, Change::Manual { text }] if text.contains("grep -n CUDA_VISIBLE_DEVICES train_singlegpu_demo.sh")),
        "{changes:?}"
    );
    // A script inside a container or under WSL: the GPU may not be handed in at all; other rules judge that.
    let mut in_wsl = Machine(by_script.0.clone());
    in_wsl.0.platform.wsl = Some(Default::default());
    assert!(!hides(&in_wsl));
    // The message alone on a host is the likeliest cause, a warning (rayleizhu/FGDM#7, prophesier/diff-svc#22);
    // the sign alone is not enough, nor the message where the driver itself lists no GPU.
    assert!(hides(&base()));
    assert_eq!(base().finding(HIDES_ALL).severity, gpu_doctor_model::Severity::Warning);
    assert_eq!(seen_in_shell.finding(HIDES_ALL).severity, gpu_doctor_model::Severity::Error);
    let mut listed_none = base();
    listed_none.0.gpus = gpu_doctor_model::Probed::Found { value: Vec::new(), source: "nvidia-smi".into() };
    assert!(!hides(&listed_none));
    let mut in_container = base();
    in_container.0.platform.container = Some(gpu_doctor_model::ContainerFacts {
        runtime: "docker".into(),
        markers: vec!["/.dockerenv".into()],
        nvidia_runtime_vars: Vec::new(),
    });
    assert!(!hides(&in_container));
    let mut script_only = Machine::pasted();
    script_only.0.env.launch_scripts.push("run.sh".into());
    assert!(!hides(&script_only));
    assert!(!hides(&Machine::pasted().deep_torch(|t| t.cuda_available = Some(true))));
    // Another program's "no device" (numba's cuInit) may load another libcuda than
    // PyTorch does: PyTorch seeing the GPU says nothing of its environment.
    let mut numba = Machine::pasted().deep_torch(|t| t.cuda_available = Some(true));
    numba.0.messages.push(gpu_doctor_model::ObservedMessage {
        id: "cuda.no_device".into(),
        line: "numba.cuda.cudadrv.driver.CudaAPIError: [100] Call to cuInit results in CUDA_ERROR_NO_DEVICE".into(),
        values: Default::default(),
    });
    assert!(!hides(&numba));
    // PyTorch not seeing the GPU either is not a difference between the shell and the program: only the
    // message's own warning.
    let both = base().deep_torch(|t| t.cuda_available = Some(false));
    assert_eq!(both.finding(HIDES_ALL).severity, gpu_doctor_model::Severity::Warning);
}

/// An index at or past the GPU count said in words ("I have two GPUs", mazurowski-lab/finetune-SAM#18) hides
/// every GPU; one below it does not, and the fix keeps the indices the machine has.
#[test]
fn an_index_past_the_stated_gpu_count_hides_every_gpu() {
    let stated = |count: u32, value: &str| {
        let mut m = Machine::pasted().env("CUDA_VISIBLE_DEVICES", value);
        m.0.stated_gpu_count = Some(count);
        m
    };
    assert_eq!(stated(1, "1").ids(), vec![HIDES_ALL.to_owned()]);
    assert_eq!(stated(2, "5").ids(), vec![HIDES_ALL.to_owned()]);
    assert_eq!(stated(2, "2,3").ids(), vec![HIDES_ALL.to_owned()]);
    assert_eq!(stated(2, "1").ids(), Vec::<String>::new());
    assert_eq!(stated(2, "0,3").ids(), Vec::<String>::new(), "GPU 0 stays visible");
    assert_eq!(stated(1, "0").ids(), Vec::<String>::new());
    assert_eq!(stated(1, "-1").ids(), Vec::<String>::new(), "-1 hides on purpose");
    let changes = stated(2, "5").changes(HIDES_ALL);
    assert!(
        matches!(&changes[..], [Change::SetVar { name, value }, Change::Manual { .. }]
        if name == "CUDA_VISIBLE_DEVICES" && value == "0,1"),
        "{changes:?}"
    );
    assert!(stated(1, "1").finding(HIDES_ALL).summary.contains("past the 1 this machine has"));
}

#[test]
fn launch_blocking_left_on_is_flagged() {
    let m = two_gpus().env("CUDA_LAUNCH_BLOCKING", "1");
    assert_eq!(m.ids(), vec!["env.cuda_launch_blocking".to_owned()]);
    assert_eq!(m.changes("env.cuda_launch_blocking")[0], unset("CUDA_LAUNCH_BLOCKING"));
    assert_eq!(two_gpus().env("CUDA_LAUNCH_BLOCKING", "0").ids(), Vec::<String>::new());
}

#[test]
fn cuda_home_that_is_not_one_toolkit_folder_is_flagged_with_the_root_meant() {
    const ROOT: &str = "env.cuda_home_not_a_toolkit_root";
    let home = |value: &str| Machine::pasted().env("CUDA_HOME", value);
    for (value, fixed) in [
        ("/usr/local/cuda:", "/usr/local/cuda"),
        // A stray `:` before the folder (facebookresearch/SparseConvNet#94's `:/usr/local/cuda-8.0`).
        (":/usr/local/cuda-8.0", "/usr/local/cuda-8.0"),
        ("/usr/local/cuda:$CUDA_HOME", "/usr/local/cuda"),
        ("/usr/local/cuda-10.0/bin", "/usr/local/cuda-10.0"),
        ("/usr/local/cuda-10.0/bin/", "/usr/local/cuda-10.0"),
        ("/usr/local/cuda-12.1/bin/nvcc", "/usr/local/cuda-12.1"),
    ] {
        let m = home(value);
        assert_eq!(m.ids(), vec![ROOT.to_owned()], "{value:?}");
        assert_eq!(m.changes(ROOT), set("CUDA_HOME", fixed), "{value:?}");
    }
    for value in ["/usr/local/cuda", "/usr/local/cuda-12.1/", "/opt/cuda", "/usr/local/cuda-binaries"] {
        assert_eq!(home(value).ids(), Vec::<String>::new(), "{value:?}");
    }
    let windows = |value: &str| Machine::windows().gpu("NVIDIA GeForce RTX 4090", "8.9").env("CUDA_PATH", value);
    assert_eq!(windows(r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.4").ids(), Vec::<String>::new());
    assert_eq!(windows(r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.4\bin").ids(), vec![ROOT.to_owned()]);
    assert_eq!(windows(r"C:\CUDA\v11.8;C:\CUDA\v12.4").ids(), vec![ROOT.to_owned()]);
}

const MIG_UNSET: &str = "env.mig_visible_devices_unset";
const SEVERAL_ON_MIG: &str = "env.cuda_visible_devices_several_on_mig";

/// Two A100s, each with MIG mode as `mig` says (nvidia-smi's "MIG M." cell).
fn a100s(mig: [Option<bool>; 2]) -> Machine {
    let mut m = Machine::linux();
    for on in mig {
        m = m.gpu("NVIDIA A100-SXM4-80GB", "8.0").gpu_with(|g| g.mig_enabled = on);
    }
    m
}

/// The NVIDIA developer forum thread "Understanding how CUDA_VISIBLE_DEVICES works" (t/339096): A100s with
/// "MIG M. Enabled" in nvidia-smi's table. A process enumerates one MIG device (MIG User Guide), so with nothing
/// naming one, or a list of several, the program does not get what it asked for; one GPU in MIG mode alone, or no
/// MIG at all, is not flagged.
#[test]
fn mig_mode_wants_one_mig_device_named() {
    let ids = |m: &Machine| -> Vec<String> { m.ids().into_iter().filter(|id| id.starts_with("env.")).collect() };
    assert_eq!(ids(&a100s([Some(true), Some(true)])), [MIG_UNSET]);
    assert_eq!(ids(&a100s([Some(true), Some(false)])), [MIG_UNSET], "a MIG device beside a whole GPU");
    assert_eq!(ids(&a100s([Some(true), None])), [MIG_UNSET], "beside a GPU whose mode a cut table does not show");
    assert_eq!(ids(&a100s([Some(false), Some(false)])), Vec::<String>::new(), "MIG off");
    assert_eq!(ids(&a100s([None, None])), Vec::<String>::new(), "MIG mode not reported");
    let one = Machine::linux().gpu("NVIDIA A100-SXM4-80GB", "8.0").gpu_with(|g| g.mig_enabled = Some(true));
    assert_eq!(ids(&one), Vec::<String>::new(), "one GPU in MIG mode: its first MIG device is the only choice");
    // Named: one MIG device is what CUDA wants; one index is not flagged here either.
    let mig_uuid = "MIG-5c9d4ab1-ae7e-5d1c-9d60-bd2b5e6b7f34";
    assert_eq!(ids(&a100s([Some(true), Some(true)]).env("CUDA_VISIBLE_DEVICES", mig_uuid)), Vec::<String>::new());
    assert_eq!(ids(&a100s([Some(true), Some(true)]).env("CUDA_VISIBLE_DEVICES", "0")), Vec::<String>::new());
    // Several devices listed on GPUs in MIG mode.
    let several = a100s([Some(true), Some(true)]).env("CUDA_VISIBLE_DEVICES", "0,1");
    assert_eq!(ids(&several), [SEVERAL_ON_MIG]);
    let f = several.finding(SEVERAL_ON_MIG);
    assert!(f.summary.contains("2 devices") && f.evidence.iter().any(|e| e.contains("MIG mode enabled")), "{f:#?}");
    let fix = several.changes(SEVERAL_ON_MIG);
    assert!(matches!(&fix[..], [Change::Manual { text }] if text.contains("nvidia-smi -L")), "{fix:?}");
    // Without MIG a list of two GPUs is fine.
    assert_eq!(ids(&a100s([Some(false), Some(false)]).env("CUDA_VISIBLE_DEVICES", "0,1")), Vec::<String>::new());
}

/// A MIG device named in another variable (an `env | grep CUDA` where a second, misspelt variable holds the
/// R450/R460 form `MIG-GPU-<uuid>/<gi>/<ci>`, which the MIG User Guide documents) shows MIG mode when no
/// nvidia-smi is pasted, and the fix names that device.
#[test]
fn a_mig_device_in_any_variable_shows_mig_mode() {
    let mig = "MIG-GPU-2a18fccc-9496-464d-d204-4394c26b56d6/13/0";
    let m = Machine::pasted().env("CUDA_VISIBLE_DEVICES", "0,1,2,3").env("CUDA_VISIBLE_DEVICES1", mig);
    assert!(m.ids().contains(&SEVERAL_ON_MIG.to_owned()), "{:?}", m.ids());
    assert_eq!(m.changes(SEVERAL_ON_MIG)[0], set("CUDA_VISIBLE_DEVICES", mig)[0]);
    let plain = Machine::pasted().env("CUDA_VISIBLE_DEVICES", "0,1,2,3");
    assert!(!plain.ids().contains(&SEVERAL_ON_MIG.to_owned()), "no sign of MIG");
}

/// hiyouga/LlamaFactory#4756: `CUDA_VISABLE_DEVICES` exported, so every GPU stayed visible. The fix sets
/// the meant name to the value; the image's own `CUDA_VERSION` and `NCCL_VERSION` are no misspellings,
/// and with the real name set too, the other spelling is left alone.
#[test]
fn a_misspelt_cuda_variable_is_named_with_the_meant_one() {
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    let judged =
        |text: &str| crate::diagnose::diagnose(&gpu_doctor_probes::parse::paste::read_pasted(text, kb).unwrap(), kb);
    let findings = judged("export CUDA_VISABLE_DEVICES=1,2\nllamafactory-cli webui\n");
    let f = findings.iter().find(|f| f.id == "env.variable_misspelled").unwrap();
    assert!(f.summary.contains("CUDA_VISIBLE_DEVICES"), "{f:#?}");
    let plan = format!("{:?}", f.plan);
    assert!(plan.contains("CUDA_VISIBLE_DEVICES") && plan.contains("\"1,2\"") && plan.contains("UnsetVar"), "{plan}");
    let images = judged("export CUDA_VERSION=12.4.1\nexport NCCL_VERSION=2.21.5\nexport CUDA_VISIBLE_DEVICES=0\n");
    assert!(!images.iter().any(|f| f.id == "env.variable_misspelled"), "{images:#?}");
    let both = judged("export CUDA_VISABLE_DEVICES=1,2\nexport CUDA_VISIBLE_DEVICES=1,2\n");
    assert!(!both.iter().any(|f| f.id == "env.variable_misspelled"));
}

/// A GPU named in a sentence says which model the machine has, not how many: an index past it
/// neither hides every GPU nor names "not a GPU here", as it does past nvidia-smi's list.
#[test]
fn a_gpu_named_in_a_sentence_is_no_count_for_the_indices() {
    let past = ["env.cuda_visible_devices_hides_all".to_owned(), "env.cuda_visible_devices_unknown_device".to_owned()];
    let said = super::pasted_ids("I am using an RTX 3090.\nexport CUDA_VISIBLE_DEVICES=1\n");
    assert!(!said.iter().any(|id| past.contains(id)), "{said:?}");
    let listed =
        super::pasted_ids("GPU 0: NVIDIA GeForce RTX 3090 (UUID: GPU-5c6b0b1e)\nexport CUDA_VISIBLE_DEVICES=1\n");
    assert!(listed.iter().any(|id| past.contains(id)), "{listed:?}");
}

/// TensorFlow logs `kernel version seems to match DSO` only after cuInit failed (its cuda_driver.cc calls the
/// diagnostician then): under an index of 1 or more, set in the code, the program saw no GPU, so the index
/// probably names a GPU the machine lacks, and the value took effect (weizhepei/CasRel#28, its lines).
#[test]
fn tensorflows_diagnostic_after_a_failed_cuinit_is_a_program_that_saw_no_gpu() {
    let text = "os.environ[\"CUDA_VISIBLE_DEVICES\"] = \"1\"\n\
                2019-03-21 22:15:59.118316: I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:303] kernel version seems to match DSO: 410.129.0\n";
    let findings = super::pasted_findings(text);
    let ids: Vec<&str> = findings.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, ["env.cuda_visible_devices_hides_all"], "{findings:#?}");
    assert_eq!(findings[0].explains, ["observed.tf.cuinit_failed"]);
    assert!(format!("{:?}", findings[0].plan).contains("`os.environ` line"), "{:#?}", findings[0]);
    // The error cuInit gave, where the text shows it, decides: an unknown error is not a missing device.
    let unknown = format!(
        "{text}2019-03-21 22:15:59.118100: E tensorflow/stream_executor/cuda/cuda_driver.cc:300] failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error\n"
    );
    let ids = super::pasted_ids(&unknown);
    assert!(!ids.iter().any(|i| i == "env.cuda_visible_devices_hides_all"), "{ids:?}");
    assert!(ids.iter().any(|i| i == "env.cuda_visible_devices_set_after_init"), "{ids:?}");
}

/// numba/numba#3963 (the reporter's line, which the maintainer named as the cause: "referencing the runtime and not
/// the driver DSO"): numba's driver-path variable naming libcudart is the finding; naming libcuda is not.
#[test]
fn a_numba_driver_path_naming_the_runtime() {
    const ID: &str = "env.cuda_driver_path_names_runtime";
    let f = super::pasted_findings("export NUMBAPRO_CUDA_DRIVER=/usr/lib/cuda/lib64/libcudart.so\n")
        .into_iter()
        .find(|f| f.id == ID)
        .expect("the runtime named as the driver");
    assert_eq!(f.summary, "NUMBAPRO_CUDA_DRIVER names libcudart.so, not the driver's library");
    assert!(f.fix.as_deref().is_some_and(|x| x.contains("unset NUMBAPRO_CUDA_DRIVER")), "{f:#?}");
    for fine in ["/usr/lib/x86_64-linux-gnu/libcuda.so", "/usr/lib/cuda/lib64/libcuda.so.10.0.130"] {
        let ids = super::pasted_ids(&format!("export NUMBA_CUDA_DRIVER={fine}\n"));
        assert!(!ids.contains(&ID.to_owned()), "{fine}: {ids:?}");
    }
}

/// rapidsai/deployment#116 (a RAPIDS maintainer's commands and RMM's error, verbatim): an empty CUDA_VISIBLE_DEVICES
/// hides every GPU whatever the machine has, so with a program seeing no device it is the finding even where the
/// text lists no GPU; the value alone, with nothing failing, is not (a process meant to run on the CPU).
#[test]
fn an_empty_value_hides_every_gpu_without_a_gpu_list() {
    const ID: &str = "env.cuda_visible_devices_hides_all";
    let cmd = "$ CUDA_VISIBLE_DEVICES=\"\" dask scheduler --protocol ucx --scheduler-file foo.json  &\n";
    let failed = "RuntimeError: CUDA error at: .../rmm/include/rmm/cuda_device.hpp:56: cudaErrorNoDevice no CUDA-capable device is detected\n";
    let f = super::pasted_findings(&format!("{cmd}{failed}")).into_iter().find(|f| f.id == ID).expect("empty value");
    assert!(f.detail.starts_with("An empty CUDA_VISIBLE_DEVICES hides every GPU."), "{}", f.detail);
    assert!(!super::pasted_ids(cmd).contains(&ID.to_owned()));
}

fn jax_line(id: &str, line: &str, values: &[(&str, &str)]) -> gpu_doctor_model::ObservedMessage {
    gpu_doctor_model::ObservedMessage {
        id: id.into(),
        line: line.into(),
        values: values.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
    }
}

/// JAX's RuntimeError for ROCm where XLA lists CUDA: the platforms setting names the wrong platform
/// (jax-ml/jax#12335's line); with no CUDA listed it says nothing.
#[test]
fn jax_asked_for_rocm_on_a_cuda_jaxlib_is_the_platforms_setting() {
    let line = "RuntimeError: Unable to initialize backend 'rocm': NOT_FOUND: Could not find registered platform with \
                name: \"rocm\". Available platform names are: Interpreter CUDA Host";
    let mut m = Machine::pasted();
    m.0.messages.push(jax_line("jax.rocm_backend_failed", line, &[("available", "Interpreter CUDA Host")]));
    assert_eq!(m.ids(), vec!["env.jax_platforms_value_wrong".to_owned()]);
    let fix = m.finding("env.jax_platforms_value_wrong").fix.unwrap_or_default();
    assert!(fix.contains("JAX_PLATFORMS=cuda") && fix.contains("jax_platforms"), "{fix}");
    let mut none = Machine::pasted();
    none.0.messages.push(jax_line("jax.rocm_backend_failed", line, &[("available", "Interpreter Host")]));
    assert!(!none.ids().contains(&"env.jax_platforms_value_wrong".to_owned()), "{:?}", none.ids());
}

/// JAX_PLATFORMS set inside the program while JAX's error carries the suffix of no platforms setting
/// (jax-ml/jax#23208): set after JAX read it; the other suffix (a setting in force) says nothing of it.
#[test]
fn jax_platforms_set_inside_the_program_after_jax_read_it() {
    const ID: &str = "env.jax_platforms_set_after_import";
    let with = |line: &str| {
        let mut m = Machine::pasted().env("JAX_PLATFORMS", "cpu");
        m.0.env.set_in_process.push("JAX_PLATFORMS".to_owned());
        m.0.messages.push(jax_line("jax.cuda_backend_failed", line, &[]));
        m
    };
    let unset = "RuntimeError: Unable to initialize backend 'cuda': FAILED_PRECONDITION: No visible GPU devices. (you may \
                 need to uninstall the failing plugin package, or set JAX_PLATFORMS=cpu to skip this backend.)";
    let m = with(unset);
    assert_eq!(m.ids(), vec![ID.to_owned()], "the JAX line is explained by it");
    assert!(m.finding(ID).fix.as_deref().is_some_and(|f| f.contains("before `import jax`")));
    let set = "RuntimeError: Unable to initialize backend 'cuda': FAILED_PRECONDITION: No visible GPU devices. (set \
               JAX_PLATFORMS='' to automatically choose an available backend)";
    assert!(!with(set).ids().contains(&ID.to_owned()));
}

/// bitsandbytes' override warning (0.43.1 on) beside its failure names the variable, the CUDA it asked for and
/// the way to clear it; the same warning with the library loading is no finding (the override may be meant), and
/// the failure with the variable set only on `docker run`'s command line is the same finding.
#[test]
fn bnb_cuda_version_override_is_named_only_where_bitsandbytes_failed() {
    let warning = "WARNING: BNB_CUDA_VERSION=121 environment variable detected; loading libbitsandbytes_cuda121.so.\n\
                   This can be used to load a bitsandbytes version that is different from the PyTorch CUDA version.\n";
    let failed = "RuntimeError: CUDA Setup failed despite GPU being available. Please run the following command to get \
                  more information:\n";
    let f = super::pasted_findings(&format!("{warning}{failed}"))
        .into_iter()
        .find(|f| f.id == "env.bnb_cuda_version_override")
        .expect("the override");
    assert!(f.detail.contains("CUDA 12.1 (BNB_CUDA_VERSION=121)"), "{}", f.detail);
    assert!(f.detail.contains("libbitsandbytes_cuda121.so"), "{}", f.detail);
    assert!(super::words(&f).is_some_and(|w| w.contains("unset BNB_CUDA_VERSION")), "{f:?}");
    assert!(!super::pasted_ids(warning).iter().any(|id| id == "env.bnb_cuda_version_override"));
    let docker = "$ docker run -it --rm -e BNB_CUDA_VERSION=\"118\" train:latest python -m bitsandbytes\n\
                  CUDA SETUP: Required library version not found: libbitsandbytes_cuda118_nocublaslt.so. Maybe you need \
                  to compile it from source?\n";
    let f = super::pasted_findings(docker);
    let named = f.iter().find(|f| f.id == "env.bnb_cuda_version_override").expect("from -e");
    assert!(named.evidence.iter().any(|e| e == "BNB_CUDA_VERSION=118"), "{:?}", named.evidence);
    assert!(
        !super::pasted_ids(&docker.replace("-e BNB_CUDA_VERSION=\"118\" ", "")).iter().any(|id| id.starts_with("env."))
    );
}

/// A container started with the capabilities `utility` or `video,utility` (no `compute`) gets nvidia-smi but no
/// libcuda: CUDA's failure there names the variable and a value with compute. With compute (or all) in the list,
/// or with no CUDA failure, it is not said.
#[test]
fn driver_capabilities_without_compute_beside_a_cuda_failure() {
    let failed = "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and \
                  installed a driver from http://www.nvidia.com/Download/index.aspx\n";
    let run =
        |caps: &str| format!("$ docker run --rm --gpus all -e NVIDIA_DRIVER_CAPABILITIES={caps} app:1 python t.py\n");
    for caps in ["utility", "video,utility"] {
        let f = super::pasted_findings(&format!("{}{failed}", run(caps)));
        let named = f.iter().find(|f| f.id == "env.driver_capabilities_lack_compute").expect(caps);
        assert!(named.evidence.contains(&format!("NVIDIA_DRIVER_CAPABILITIES={caps}")), "{:?}", named.evidence);
        assert!(super::words(named).is_some_and(|w| w.contains("NVIDIA_DRIVER_CAPABILITIES=compute,utility")));
        assert!(f.iter().all(|f| !f.id.starts_with("containers.")), "{f:?}");
    }
    for caps in ["compute,utility", "all"] {
        assert!(
            !super::pasted_ids(&format!("{}{failed}", run(caps))).iter().any(|id| id.starts_with("env.driver_cap"))
        );
    }
    assert!(!super::pasted_ids(&run("utility")).iter().any(|id| id.starts_with("env.driver_cap")));
}

/// XLA_PYTHON_CLIENT_MEM_FRACTION must be a fraction: `100` (jax-ml/jax#17426) and `0` are findings, a percentage
/// below 100 gets its fraction in the fix, and `.75` or `1` are no finding.
#[test]
fn xla_mem_fraction_outside_zero_to_one() {
    let f = super::pasted_findings("os.environ[\"XLA_PYTHON_CLIENT_MEM_FRACTION\"]=\"100\"\n");
    let named = f.iter().find(|f| f.id == "env.xla_mem_fraction_out_of_range").expect("100");
    assert!(named.detail.contains("more than the GPU has"), "{}", named.detail);
    let f = super::pasted_findings("export XLA_PYTHON_CLIENT_MEM_FRACTION=75\n");
    let named = f.iter().find(|f| f.id == "env.xla_mem_fraction_out_of_range").expect("75");
    assert!(super::words(named).is_some_and(|w| w.contains("for 75% write 0.75")), "{named:?}");
    assert!(
        super::pasted_ids("export XLA_PYTHON_CLIENT_MEM_FRACTION=0\n")
            .contains(&"env.xla_mem_fraction_out_of_range".to_owned())
    );
    for fine in [".75", "1", "0.5"] {
        let ids = super::pasted_ids(&format!("export XLA_PYTHON_CLIENT_MEM_FRACTION={fine}\n"));
        assert!(!ids.iter().any(|id| id == "env.xla_mem_fraction_out_of_range"), "{fine}: {ids:?}");
    }
}

/// PyTorch's allocator-backend assert is the variable set after the import, with both backends said; no assert,
/// no finding.
#[test]
fn allocator_backend_changed_after_import() {
    let line = "RuntimeError: config[i] == get()->name() INTERNAL ASSERT FAILED at \"../c10/cuda/CUDACachingAllocator.cpp\":644, \
                please report a bug to PyTorch. Allocator backend parsed at runtime != allocator backend parsed at load time\n";
    let f = super::pasted_findings(line);
    assert!(f.iter().any(|f| f.id == "env.alloc_conf_set_after_import"), "{f:?}");
    let both = "RuntimeError: Allocator backend parsed at runtime != allocator backend parsed at load time, cudaMallocAsync != native\n";
    let f = super::pasted_findings(both);
    let named = f.iter().find(|f| f.id == "env.alloc_conf_set_after_import").expect("both");
    assert!(named.detail.contains("`backend:cudaMallocAsync` now, `native` when torch was loaded"), "{}", named.detail);
    assert!(
        !super::pasted_ids("export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync\n")
            .iter()
            .any(|id| id.starts_with("env.alloc"))
    );
}

/// An empty CUDA_VISIBLE_DEVICES in front of the command, and CUDA's `initialization error` from the first device
/// call after cuInit found nothing (JuliaGPU/CUDA.jl#1336), is the variable hiding every GPU; the same error without
/// the variable is not.
#[test]
fn empty_visible_devices_beside_an_initialization_error() {
    let error = "  CUDA error: initialization error (code 3, ERROR_NOT_INITIALIZED)\n";
    let ids = super::pasted_ids(&format!("ian@desktop:~$ CUDA_VISIBLE_DEVICES=\"\" julia17\n{error}"));
    assert!(ids.contains(&"env.cuda_visible_devices_hides_all".to_owned()), "{ids:?}");
    assert!(!super::pasted_ids(error).iter().any(|id| id.starts_with("env.")));
}
