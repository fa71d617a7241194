//! FFmpeg's NVENC/NVDEC failing to load the driver's video libraries: the host lacks them, or the container was
//! not given the `video` capability.

use super::pasted_ids;

const CAPABILITY: &str = "env.driver_capabilities_lack_video";
const LIBRARIES: &str = "presence.video_codec_libs_missing";

/// Huanshere/VideoLingo#406: FFmpeg built in a Docker image, the driver 570 on the host ("docker environment
/// lacks libnvidia-encode.so.1"): the container, with no video library shown in it, lacks the capability. The
/// minimum-driver line after it is not a finding of its own (the driver is far newer).
#[test]
fn a_container_without_the_video_capability() {
    let text = "docker\u{7f16}\u{8bd1}\u{5b89}\u{88c5},\u{70e7}\u{5f55}\u{5b57}\u{5e55}\u{548c}tts\u{5408}\u{5e76}\u{90fd}\u{5931}\u{8d25}\n\
                NVIDIA-SMI 570.86.16              Driver Version: 570.86.16      CUDA Version: 12.8\n\
                [h264_nvenc @ 0x55bd94c6bb40] Cannot load libnvidia-encode.so.1\n\
                [h264_nvenc @ 0x55bd94c6bb40] The minimum required Nvidia driver for nvenc is 435.21 or newer\n";
    let ids = pasted_ids(text);
    assert!(ids.contains(&CAPABILITY.to_owned()), "{ids:?}");
    assert!(!ids.iter().any(|id| id.starts_with("observed.ffmpeg.")), "explained by the finding: {ids:?}");
}

/// The same failure in a container whose loader cache lists the decode library (`ldconfig -p`'s line, as a
/// comment quotes it in backticks): the video capability is on, so the host lacks the encode library; and a
/// NVIDIA_DRIVER_CAPABILITIES without `video` is named whatever else the text shows.
#[test]
fn a_video_library_present_in_the_container_points_at_the_host() {
    let base = "docker exec -it jellyfin ldconfig -p | grep cuvid\n\
                `libnvcuvid.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnvcuvid.so.1`\n\
                [h264_nvenc @ 0x55688b625f40] Cannot load libnvidia-encode.so.1\n";
    assert!(pasted_ids(base).contains(&LIBRARIES.to_owned()), "{:?}", pasted_ids(base));
    let capabilities = format!("{base}NVIDIA_DRIVER_CAPABILITIES=compute,utility\n");
    assert!(pasted_ids(&capabilities).contains(&CAPABILITY.to_owned()), "{:?}", pasted_ids(&capabilities));
    let all = format!("{base}NVIDIA_DRIVER_CAPABILITIES=all\n");
    assert!(!pasted_ids(&all).contains(&CAPABILITY.to_owned()), "{:?}", pasted_ids(&all));
}

/// flox/flox#3597 (FFmpeg 7.1.1 on an Ubuntu host) and carykh/jumpcutter#188 (Windows): no container shown, so the
/// host's libraries (on Linux beside a container's capability, since FFmpeg's lines show no place); the Windows fix
/// is the display driver, the Linux one the distribution's packages.
#[test]
fn on_a_host_the_libraries_are_missing() {
    let linux = "    [h264 @ 0x1e8e8840] Cannot load libnvcuvid.so.1\n    [h264 @ 0x1e8e8840] Failed loading nvcuvid.\n    \
                 [h264_nvenc @ 0x1d500c40] Cannot load libnvidia-encode.so.1\n    [h264_nvenc @ 0x1d500c40] The minimum \
                 required Nvidia driver for nvenc is 530.41.03 or newer\n";
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    let snap = gpu_doctor_probes::parse::paste::read_pasted(linux, kb).unwrap();
    let found = crate::diagnose::diagnose(&snap, kb);
    let f = found.iter().find(|f| f.id == LIBRARIES).expect("the finding");
    assert!(f.summary.contains("libnvcuvid.so.1") && f.summary.contains("libnvidia-encode.so.1"), "{}", f.summary);
    let fix = f.fix.as_deref().unwrap_or_default();
    assert!(fix.contains("libnvidia-encode1 libnvcuvid1") && fix.contains("NVIDIA_DRIVER_CAPABILITIES"), "{fix}");
    // FFmpeg's lines alone show no place: the host's cause and a container's are each said for their place.
    assert!(f.summary.starts_with("If this ran on the host"), "{}", f.summary);
    let c = found.iter().find(|f| f.id == CAPABILITY).expect("the container's cause too");
    assert!(c.summary.starts_with("If this ran in a container"), "{}", c.summary);
    // With the host's loader cache shown (an `ldconfig -p` line of another library), the host's alone.
    let cache = format!("\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\n{linux}");
    let ids = pasted_ids(&cache);
    assert!(ids.contains(&LIBRARIES.to_owned()) && !ids.contains(&CAPABILITY.to_owned()), "{ids:?}");
    let windows = "Cannot load nvEncodeAPI64.dll\n\
                   [hevc_nvenc @ 000001e5ca609280] The minimum required Nvidia driver for nvenc is 436.15 or newer\n";
    let snap = gpu_doctor_probes::parse::paste::read_pasted(windows, kb).unwrap();
    let found = crate::diagnose::diagnose(&snap, kb);
    let f = found.iter().find(|f| f.id == LIBRARIES).expect("the Windows finding");
    assert!(f.fix.as_deref().is_some_and(|x| x.contains("display driver")), "{:?}", f.fix);
}

/// lisamelton/video_transcoding#286: HandBrake looks for NVENC at start-up and prints nv-codec-headers' line on a
/// Windows machine not encoding with it ("you can just ignore it"). The line alone, with no codec, GPU, driver or
/// container in the text, is a note; the same line beside an `_nvenc` encoder's line, or an NVIDIA GPU, is the error.
#[test]
fn a_start_up_probe_alone_is_a_note() {
    const PROBE: &str = "presence.video_codec_probe_only";
    let probe = "Cannot load nvEncodeAPI64.dll\nCannot load nvEncodeAPI64.dll\nI'm in a Windows environment.\n";
    let kb = gpu_doctor_kb::Kb::get().unwrap();
    let snap = gpu_doctor_probes::parse::paste::read_pasted(probe, kb).unwrap();
    let found = crate::diagnose::diagnose(&snap, kb);
    let f = found.iter().find(|f| f.id == PROBE).expect("the note");
    assert_eq!(f.severity, gpu_doctor_model::Severity::Info);
    assert!(!found.iter().any(|f| f.severity == gpu_doctor_model::Severity::Error), "{found:#?}");
    // FFmpeg names the encoder on its lines (nvenc.c's nvenc_print_driver_requirement follows the failure).
    let asked = format!(
        "{probe}[h264_nvenc @ 0x55bd94c6bb40] The minimum required Nvidia driver for nvenc is 435.21 or newer\n"
    );
    let ids = pasted_ids(&asked);
    assert!(ids.contains(&LIBRARIES.to_owned()) && !ids.contains(&PROBE.to_owned()), "{ids:?}");
    let gpu = format!("{probe}GPU 0: NVIDIA GeForce GTX 1060 6GB (UUID: GPU-4f1e5bd6-1d2c-2b3a-8e0c-5a7c5a5b5c5d)\n");
    let ids = pasted_ids(&gpu);
    assert!(ids.contains(&LIBRARIES.to_owned()) && !ids.contains(&PROBE.to_owned()), "{ids:?}");
}
