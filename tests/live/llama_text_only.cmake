# The live tier's llama.cpp, text only. The Makefile passes this file to llama-cpp-python's build
# as CMAKE_PROJECT_llama.cpp_INCLUDE, so CMake runs it at llama.cpp's project() call, after
# llama-cpp-python forced its "common" library on (which only the multimodal library, also left
# out, and llama.cpp's own tools use). The Python package loads libllama and libggml alone.
set(LLAMA_BUILD_COMMON OFF CACHE BOOL "llama: build common utils library" FORCE)
