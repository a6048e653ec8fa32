# Every dependency the system uses is found here, once, so a missing package
# fails the configure step with its name rather than a later link error.
# launch/install-deps installs all of them on Debian 12.

find_package(Torch REQUIRED)
find_package(ONNX REQUIRED)
find_package(Protobuf REQUIRED)
find_package(CapnProto REQUIRED)
find_package(cppzmq REQUIRED)
find_package(HDF5 REQUIRED COMPONENTS C CXX)
find_package(yaml-cpp REQUIRED)
find_package(GTest REQUIRED)
find_package(Threads REQUIRED)

# Torch's exported flags add -D_GLIBCXX_USE_CXX11_ABI and friends; keep them,
# but do not let its include directories leak warnings into project code.
message(STATUS "graphworld: Torch ${Torch_VERSION}, ONNX ${ONNX_VERSION}, CapnProto ${CapnProto_VERSION}, HDF5 ${HDF5_VERSION}")

# HDF5's FindHDF5 gives variables, not a target; wrap them once.
if(NOT TARGET graphworld_hdf5)
  add_library(graphworld_hdf5 INTERFACE)
  target_include_directories(graphworld_hdf5 SYSTEM INTERFACE ${HDF5_INCLUDE_DIRS})
  target_link_libraries(graphworld_hdf5 INTERFACE ${HDF5_CXX_LIBRARIES} ${HDF5_C_LIBRARIES})
  target_compile_definitions(graphworld_hdf5 INTERFACE ${HDF5_DEFINITIONS})
endif()
