import FacewireOpenCV

/// Sets OpenCV's own worker-thread count for the whole process (`cv::setNumThreads`).
///
/// Workers that run one detector per thread should call `setOpenCVThreads(1)` once at start-up, so OpenCV does
/// not oversubscribe the cores with its own pool. Values below 0 restore OpenCV's default.
public func setOpenCVThreads(_ n: Int) {
    OpenCVSettings.setThreadCount(n)
}
