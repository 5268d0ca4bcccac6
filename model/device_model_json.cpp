// JSON for the device model (device.json, the calibration cache). Missing keys keep their
// defaults so older files still load.
#include "model/device_model.hpp"

#include "model/json_support.hpp"

namespace speedlab {

SPEEDLAB_JSON_FIELDS(ceiling, value, unit, measured, source)
SPEEDLAB_JSON_FIELDS(device_model, gpu_name, gpu, host, properties)

} // namespace speedlab
