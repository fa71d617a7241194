//! Tests of `read_pasted`: one module per format, the known-message catalogue, mixed pastes,
//! negative controls and no-panic properties.

mod depth;
mod diagnosed;
mod formats;
mod inference;
mod linear;
mod messages;
mod mixed;
mod props;
mod reports;
mod shared_fixtures;
mod system;

use super::*;
use gpu_doctor_model::{Framework, FrameworkBuild, Gpu, PythonEnv};
use gpu_doctor_model::{Origin, Probed};

pub(super) const COLLECT_ENV_CU124: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/collect_env_linux_cu124.txt"));
pub(super) const COLLECT_ENV_OLD: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/collect_env_old_four_gpus.txt"));
pub(super) const COLLECT_ENV_WINDOWS_CPU: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/collect_env_windows_cpu.txt"));
pub(super) const SMI_Q: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/smi_q_two_l4.txt"));
pub(super) const PIP_LIST: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/pip_list.txt"));
pub(super) const PIP_FREEZE: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/pip_freeze.txt"));
pub(super) const CONDA_LIST: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/conda_list.txt"));
pub(super) const JAX_ENV: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/jax_env.txt"));
pub(super) const TF_PRINTS: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/tf_prints.txt"));
pub(super) const SUPPORT_THREAD: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/support_thread.md"));
pub(super) const HEALTHY: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/healthy.txt"));
/// pytorch/pytorch#31876 (tests/corpus/arch_not_in_build/pytorch-31876-geforce-210.txt): nvcc, REPL
/// prints in backticks, collect_env.
pub(super) const PYTHON_PRINTS: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/python_prints_pytorch_31876.txt"));
/// The system-level inputs, each from its corpus case (tests/corpus/…): `lspci -vv` with nouveau in use
/// (negativo17-nvidia-driver-73-lspci-vv-nouveau-in-use), the kernel's legacy-GPU message
/// (nixos-hardware-1828), a refused module key (canonical-nvidia-graphics-drivers-62), nvcc run by path and
/// `echo $PATH` (comfyui-nvidia-docker-36), `ldconfig -p` under WSL2 (wsl-8587), `CUDA_VISIBLE_DEVICES`
/// before a command beside nvidia-smi (pytorch-examples-115).
pub(super) const LSPCI_NOUVEAU: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/lspci_vv_nouveau_negativo17_73.txt"));
pub(super) const LEGACY_GPU: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/kernel_legacy_gpu_nixos_hardware_1828.txt"));
pub(super) const KEY_REJECTED: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/kernel_key_rejected_canonical_62.txt"));
pub(super) const NVCC_PATHS: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/nvcc_paths_comfyui_docker_36.txt"));
pub(super) const LDCONFIG_WSL: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/ldconfig_wsl_8587.txt"));
pub(super) const VISIBLE_DEVICES: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/paste/cuda_visible_devices_pytorch_examples_115.txt"
));
/// `lspci -vv` link lines: the RTX 4090's header and driver lines from tinygrad/open-gpu-kernel-modules#6,
/// its `LnkCap`/`LnkSta` lines from janhq/jan#183 (real lines of two threads, joined into one block).
pub(super) const LSPCI_LINK: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/lspci_vv_link_lines.txt"));
/// pytorch/pytorch#122924: collect_env on Windows with PyPI's torch (no local tag, `Could not collect`).
pub(super) const COLLECT_ENV_WINDOWS_PYPI: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/collect_env_windows_pypi_122924.txt"));
/// vllm-project/vllm#25539: vLLM's collect_env, names padded before the colon.
pub(super) const COLLECT_ENV_VLLM: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/collect_env_vllm_sections.txt"));
/// llama.cpp, ollama, gpustat, nvtop and ptxas lines from public threads.
pub(super) const TOOL_LINES: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/tool_lines.txt"));
/// microsoft/WSL#5554: nvidia-smi failing on a WSL1 kernel whose user believed it was WSL2.
pub(super) const WSL_VERSION: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/wsl_version_5554.txt"));
/// beclab/Olares#3963: NVIDIA's module finds the GPU bound to nova-core.
pub(super) const KERNEL_NOVA_CORE: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/kernel_nova_core_olares_3963.txt"));

/// The kernel's bandwidth line at enumeration, wrapped by a mailer, in older kernels' words: a GTX 645
/// behind an ASMedia switch on a RockPro64's one-lane root port, beside a Marvell SATA card's line
/// (linux-rockchip and linux-pci lists, "[BUG] rk3399-rockpro64 pcie synchronous external abort",
/// Peter Geis, 2019-11-22, <CAMdYzYqn3L7x-vc+_K6jG0EVTiPGbz8pQ-N1Q1mRbcVXE822Yg@mail.gmail.com>;
/// whole lines kept, the rest of the dmesg removed).
pub(super) const KERNEL_BANDWIDTH_X1: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/kernel_bandwidth_rockpro64.txt"));
/// The same line on one line, of a GTX 950 in an x16 slot at 2.5 GT/s, and of a USB controller
/// (linux-btrfs list, "BTRFS error (device sda1): bdev /dev/sdb1 errs", 2021-03-12,
/// <ef3da480-d00d-877e-2349-6d7b2ebda05e@gmail.com>, its dmesg attachment; whole lines kept).
pub(super) const KERNEL_BANDWIDTH_X16: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/kernel_bandwidth_p35_gtx950.txt"));
/// A Raspberry Pi Compute Module 4's PCIe controller coming up at one lane, and a GTX 1080 behind it
/// (geerlingguy/raspberry-pi-pcie-devices#123, the maintainer's `dmesg`, 2021-05-13; its first
/// lines, whole).
pub(super) const KERNEL_BRCM_PCIE_X1: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/kernel_brcm_pcie_cm4_gtx1080_123.txt"));
/// A Raspberry Pi 5's two controllers: the one-lane connector (no host-bridge line kept) with an AMD
/// GPU behind a switch, and the four-lane RP1 in domain 0001 (geerlingguy/raspberry-pi-pcie-devices#712,
/// juliosnovaes's `dmesg`; whole lines, some between them left out).
pub(super) const KERNEL_BRCM_PCIE_PI5: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/kernel_brcm_pcie_pi5_two_controllers_712.txt"));
/// PyTorch's old bug template filled in by hand (pytorch/pytorch#23644, 2019-08-01, its
/// Environment bullets, whole): a DataLoader bug, nothing wrong with the GPU setup.
pub(super) const LABELLED_TEMPLATE: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/labelled_lines_pytorch_23644.txt"));
/// A reporter's own `Driver Version:` line under a kernel error (iPERDance/iPERCore#47, 2021-01-04,
/// the description, whole).
pub(super) const LABELLED_DRIVER: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/labelled_lines_ipercore_47.txt"));
/// `lspci -vvvv` of an RTX 3090 on a Rockchip board's one-lane slot: LnkCap x16, LnkSta `Width x1
/// (downgraded)` (HeyMeco/Rockchip-pcie-devices, the RTX 3090's card page, linked to
/// HeyMeco/Rockchip-pcie-devices#1; the device's block, whole).
pub(super) const LSPCI_X1_ROCKCHIP: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/lspci_vvvv_rtx3090_rockchip_x1.txt"));

/// Every sample, for the whole-corpus tests.
pub(super) const SAMPLES: &[&str] = &[
    COLLECT_ENV_CU124,
    COLLECT_ENV_OLD,
    COLLECT_ENV_WINDOWS_CPU,
    SMI_Q,
    PIP_LIST,
    PIP_FREEZE,
    CONDA_LIST,
    JAX_ENV,
    TF_PRINTS,
    SUPPORT_THREAD,
    HEALTHY,
    PYTHON_PRINTS,
    LSPCI_NOUVEAU,
    LEGACY_GPU,
    KEY_REJECTED,
    NVCC_PATHS,
    LDCONFIG_WSL,
    VISIBLE_DEVICES,
    LSPCI_LINK,
    COLLECT_ENV_WINDOWS_PYPI,
    COLLECT_ENV_VLLM,
    TOOL_LINES,
    WSL_VERSION,
    KERNEL_NOVA_CORE,
    KERNEL_BANDWIDTH_X1,
    KERNEL_BRCM_PCIE_X1,
    KERNEL_BRCM_PCIE_PI5,
    LABELLED_TEMPLATE,
    LABELLED_DRIVER,
    KERNEL_BANDWIDTH_X16,
    LSPCI_X1_ROCKCHIP,
];

pub(super) fn kb() -> &'static Kb {
    Kb::get().unwrap()
}

/// `read_pasted` with the embedded knowledge base, which must succeed.
pub(super) fn read(text: &str) -> Snapshot {
    read_pasted(text, kb()).unwrap_or_else(|e| panic!("{e}"))
}

/// True when nothing in `text` is recognised: it is read (readable text is never refused), with
/// no format and no message, and a note that says so.
pub(super) fn unrecognised(text: &str) -> bool {
    read_pasted(text, kb()).is_ok_and(|s| {
        formats(&s).is_empty()
            && s.messages.is_empty()
            && s.notes.iter().any(|n| n.starts_with("nothing gpu-doctor recognises"))
    })
}

pub(super) fn formats(s: &Snapshot) -> Vec<&str> {
    match &s.origin {
        Origin::Pasted { formats } => formats.iter().map(String::as_str).collect(),
        other => panic!("not pasted: {other:?}"),
    }
}

pub(super) fn gpus(s: &Snapshot) -> &[Gpu] {
    s.gpus.value().map(Vec::as_slice).unwrap_or_default()
}

pub(super) fn env(s: &Snapshot) -> &PythonEnv {
    let envs = s.python_envs.value().expect("a pasted environment");
    assert_eq!(envs.len(), 1);
    let e = &envs[0];
    assert_eq!((e.name.as_str(), e.prefix.as_str()), ("pasted", "(pasted)"));
    assert_eq!(e.found_by, ["pasted text"]);
    e
}

pub(super) fn framework<'a>(s: &'a Snapshot, name: &str) -> &'a Framework {
    env(s).frameworks.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("no {name}"))
}

pub(super) fn cuda(v: &str) -> FrameworkBuild {
    FrameworkBuild::Cuda { version: Some(v.to_owned()) }
}

pub(super) fn ids(s: &Snapshot) -> Vec<&str> {
    s.messages.iter().map(|m| m.id.as_str()).collect()
}

pub(super) fn is_unknown<T>(p: &Probed<T>) -> bool {
    matches!(p, Probed::Unknown { .. })
}
