//! What the worker runs GPU tests on: the CUDA device (`gpu::Gpu`), or a fake in the worker's tests.

use gpu_doctor_model::bench::plan::{BenchPlan, TestKind};
use gpu_doctor_model::bench::protocol::{BenchEvent, DeviceInfo, Failure, TestResult};

/// A device the worker runs GPU tests on.
pub(crate) trait TestDevice {
    /// What CUDA says about the device, for each test's `started` event.
    fn info(&self) -> DeviceInfo;
    /// Runs one test.
    fn run(
        &mut self,
        test: TestKind,
        plan: &BenchPlan,
        emit: &mut dyn FnMut(BenchEvent),
    ) -> Result<TestResult, Failure>;
    /// Asked after a test failed: an error of kind `ContextLost` when the context no longer works.
    fn check_context(&mut self) -> Result<(), Failure>;
}
