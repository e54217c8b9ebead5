/*
 * vk_internal.h — private interfaces of the Vulkan backend.
 *
 * The backend never links against Vulkan and needs no Vulkan headers to
 * build: the subset of the Vulkan 1.1 API it calls (and the few 1.2 /
 * extension structs it chains to query features: 8- and 16-bit storage,
 * float16/int8 arithmetic, 64-bit and float atomics, cooperative matrices,
 * which Debian 12's headers predate) is declared here by hand, laid out as
 * the Khronos headers lay it out.  vk_api.c opens libvulkan.so.1 with
 * dlopen, resolves the VK_SYMBOLS table, creates one instance and lists
 * the physical devices that have a compute queue.  vk_codegen.c is the
 * GLSL dialect of the SIMT kit, vk_glslc.c runs the GLSL compiler,
 * vk_target.c the target description of the lowering passes, vk_plugin.c
 * the plugin (devices, compile, memory, launch) on the SDK shell.
 */
#ifndef TILEC_VK_INTERNAL_H
#define TILEC_VK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tilec/ir.h"
#include "tilec/plugin.h"
#include "tilec/shell.h"
#include "tilec/simt.h"

#define TILEC_VK_PLUGIN_VERSION "0.1.0"

/* ---- the Vulkan API subset ---------------------------------------------------- */

typedef int32_t VkResult;
typedef uint32_t VkBool32;
typedef uint32_t VkFlags;
typedef uint64_t VkDeviceSize;
typedef int32_t VkStructureType;

typedef struct VkInstance_T *VkInstance;
typedef struct VkPhysicalDevice_T *VkPhysicalDevice;
typedef struct VkDevice_T *VkDevice;
typedef struct VkQueue_T *VkQueue;
typedef struct VkCommandBuffer_T *VkCommandBuffer;
/* non-dispatchable handles are 64-bit on every platform */
typedef uint64_t VkBuffer, VkDeviceMemory, VkShaderModule, VkPipeline, VkPipelineLayout, VkPipelineCache,
    VkDescriptorSetLayout, VkDescriptorPool, VkDescriptorSet, VkCommandPool, VkFence, VkQueryPool, VkSemaphore;

#define VK_SUCCESS 0
#define VK_NOT_READY 1
#define VK_TIMEOUT 2
#define VK_INCOMPLETE 5
#define VK_TRUE 1u
#define VK_FALSE 0u
#define VK_WHOLE_SIZE (~0ull)
#define VK_MAKE_API_VERSION(major, minor, patch) (((uint32_t)(major) << 22) | ((uint32_t)(minor) << 12) | (uint32_t)(patch))
#define VK_API_MAJOR(v) ((uint32_t)(v) >> 22 & 0x7fu)
#define VK_API_MINOR(v) ((uint32_t)(v) >> 12 & 0x3ffu)
#define VK_API_PATCH(v) ((uint32_t)(v) & 0xfffu)

/* VkStructureType values */
#define VK_ST_APPLICATION_INFO 0
#define VK_ST_INSTANCE_CREATE_INFO 1
#define VK_ST_DEVICE_QUEUE_CREATE_INFO 2
#define VK_ST_DEVICE_CREATE_INFO 3
#define VK_ST_SUBMIT_INFO 4
#define VK_ST_MEMORY_ALLOCATE_INFO 5
#define VK_ST_FENCE_CREATE_INFO 8
#define VK_ST_QUERY_POOL_CREATE_INFO 11
#define VK_ST_BUFFER_CREATE_INFO 12
#define VK_ST_SHADER_MODULE_CREATE_INFO 16
#define VK_ST_PIPELINE_SHADER_STAGE_CREATE_INFO 18
#define VK_ST_COMPUTE_PIPELINE_CREATE_INFO 29
#define VK_ST_PIPELINE_LAYOUT_CREATE_INFO 30
#define VK_ST_DESCRIPTOR_SET_LAYOUT_CREATE_INFO 32
#define VK_ST_DESCRIPTOR_POOL_CREATE_INFO 33
#define VK_ST_DESCRIPTOR_SET_ALLOCATE_INFO 34
#define VK_ST_WRITE_DESCRIPTOR_SET 35
#define VK_ST_COMMAND_POOL_CREATE_INFO 39
#define VK_ST_COMMAND_BUFFER_ALLOCATE_INFO 40
#define VK_ST_COMMAND_BUFFER_BEGIN_INFO 42
#define VK_ST_MEMORY_BARRIER 46
#define VK_ST_PHYSICAL_DEVICE_FEATURES_2 1000059000
#define VK_ST_PHYSICAL_DEVICE_PROPERTIES_2 1000059001
#define VK_ST_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES 1000094000
#define VK_ST_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES 1000083000
#define VK_ST_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES 1000177000
#define VK_ST_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES 1000082000
#define VK_ST_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES 1000180000
#define VK_ST_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT 1000260000
#define VK_ST_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV 1000154001
#define VK_ST_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV 1000249000
#define VK_ST_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR 1000506000
#define VK_ST_COOPERATIVE_MATRIX_PROPERTIES_KHR 1000506001

/* enums and flags */
#define VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU 1
#define VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU 2
#define VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU 3
#define VK_PHYSICAL_DEVICE_TYPE_CPU 4
#define VK_QUEUE_COMPUTE_BIT 0x2u
#define VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT 0x1u
#define VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT 0x2u
#define VK_MEMORY_PROPERTY_HOST_COHERENT_BIT 0x4u
#define VK_MEMORY_HEAP_DEVICE_LOCAL_BIT 0x1u
#define VK_BUFFER_USAGE_TRANSFER_SRC_BIT 0x1u
#define VK_BUFFER_USAGE_TRANSFER_DST_BIT 0x2u
#define VK_BUFFER_USAGE_STORAGE_BUFFER_BIT 0x20u
#define VK_SHARING_MODE_EXCLUSIVE 0
#define VK_SHADER_STAGE_COMPUTE_BIT 0x20u
#define VK_DESCRIPTOR_TYPE_STORAGE_BUFFER 7
#define VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT 0x1u
#define VK_PIPELINE_BIND_POINT_COMPUTE 1
#define VK_PIPELINE_CREATE_DISPATCH_BASE_BIT 0x10u
#define VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT 0x2u
#define VK_COMMAND_BUFFER_LEVEL_PRIMARY 0
#define VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT 0x1u
#define VK_QUERY_TYPE_TIMESTAMP 2
#define VK_QUERY_RESULT_64_BIT 0x1u
#define VK_QUERY_RESULT_WAIT_BIT 0x2u
#define VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT 0x1u
#define VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT 0x800u
#define VK_PIPELINE_STAGE_TRANSFER_BIT 0x1000u
#define VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT 0x2000u
#define VK_PIPELINE_STAGE_HOST_BIT 0x4000u
#define VK_ACCESS_SHADER_READ_BIT 0x20u
#define VK_ACCESS_SHADER_WRITE_BIT 0x40u
#define VK_ACCESS_TRANSFER_READ_BIT 0x800u
#define VK_ACCESS_TRANSFER_WRITE_BIT 0x1000u
#define VK_ACCESS_HOST_READ_BIT 0x2000u
#define VK_ACCESS_HOST_WRITE_BIT 0x4000u
/* VK_KHR_cooperative_matrix */
#define VK_COMPONENT_TYPE_FLOAT16_KHR 0
#define VK_COMPONENT_TYPE_FLOAT32_KHR 1
#define VK_COMPONENT_TYPE_SINT8_KHR 3
#define VK_COMPONENT_TYPE_SINT32_KHR 5
#define VK_SCOPE_SUBGROUP_KHR 3

typedef struct VkApplicationInfo {
    VkStructureType sType;
    const void *pNext;
    const char *pApplicationName;
    uint32_t applicationVersion;
    const char *pEngineName;
    uint32_t engineVersion;
    uint32_t apiVersion;
} VkApplicationInfo;

typedef struct VkInstanceCreateInfo {
    VkStructureType sType;
    const void *pNext;
    VkFlags flags;
    const VkApplicationInfo *pApplicationInfo;
    uint32_t enabledLayerCount;
    const char *const *ppEnabledLayerNames;
    uint32_t enabledExtensionCount;
    const char *const *ppEnabledExtensionNames;
} VkInstanceCreateInfo;

typedef struct VkPhysicalDeviceLimits {
    uint32_t maxImageDimension1D, maxImageDimension2D, maxImageDimension3D, maxImageDimensionCube;
    uint32_t maxImageArrayLayers, maxTexelBufferElements, maxUniformBufferRange, maxStorageBufferRange;
    uint32_t maxPushConstantsSize, maxMemoryAllocationCount, maxSamplerAllocationCount;
    VkDeviceSize bufferImageGranularity, sparseAddressSpaceSize;
    uint32_t maxBoundDescriptorSets, maxPerStageDescriptorSamplers, maxPerStageDescriptorUniformBuffers;
    uint32_t maxPerStageDescriptorStorageBuffers, maxPerStageDescriptorSampledImages;
    uint32_t maxPerStageDescriptorStorageImages, maxPerStageDescriptorInputAttachments, maxPerStageResources;
    uint32_t maxDescriptorSetSamplers, maxDescriptorSetUniformBuffers, maxDescriptorSetUniformBuffersDynamic;
    uint32_t maxDescriptorSetStorageBuffers, maxDescriptorSetStorageBuffersDynamic, maxDescriptorSetSampledImages;
    uint32_t maxDescriptorSetStorageImages, maxDescriptorSetInputAttachments;
    uint32_t maxVertexInputAttributes, maxVertexInputBindings, maxVertexInputAttributeOffset;
    uint32_t maxVertexInputBindingStride, maxVertexOutputComponents;
    uint32_t maxTessellationGenerationLevel, maxTessellationPatchSize;
    uint32_t maxTessellationControlPerVertexInputComponents, maxTessellationControlPerVertexOutputComponents;
    uint32_t maxTessellationControlPerPatchOutputComponents, maxTessellationControlTotalOutputComponents;
    uint32_t maxTessellationEvaluationInputComponents, maxTessellationEvaluationOutputComponents;
    uint32_t maxGeometryShaderInvocations, maxGeometryInputComponents, maxGeometryOutputComponents;
    uint32_t maxGeometryOutputVertices, maxGeometryTotalOutputComponents;
    uint32_t maxFragmentInputComponents, maxFragmentOutputAttachments, maxFragmentDualSrcAttachments;
    uint32_t maxFragmentCombinedOutputResources;
    uint32_t maxComputeSharedMemorySize;
    uint32_t maxComputeWorkGroupCount[3];
    uint32_t maxComputeWorkGroupInvocations;
    uint32_t maxComputeWorkGroupSize[3];
    uint32_t subPixelPrecisionBits, subTexelPrecisionBits, mipmapPrecisionBits;
    uint32_t maxDrawIndexedIndexValue, maxDrawIndirectCount;
    float maxSamplerLodBias, maxSamplerAnisotropy;
    uint32_t maxViewports, maxViewportDimensions[2];
    float viewportBoundsRange[2];
    uint32_t viewportSubPixelBits;
    size_t minMemoryMapAlignment;
    VkDeviceSize minTexelBufferOffsetAlignment, minUniformBufferOffsetAlignment, minStorageBufferOffsetAlignment;
    int32_t minTexelOffset;
    uint32_t maxTexelOffset;
    int32_t minTexelGatherOffset;
    uint32_t maxTexelGatherOffset;
    float minInterpolationOffset, maxInterpolationOffset;
    uint32_t subPixelInterpolationOffsetBits, maxFramebufferWidth, maxFramebufferHeight, maxFramebufferLayers;
    VkFlags framebufferColorSampleCounts, framebufferDepthSampleCounts, framebufferStencilSampleCounts;
    VkFlags framebufferNoAttachmentsSampleCounts;
    uint32_t maxColorAttachments;
    VkFlags sampledImageColorSampleCounts, sampledImageIntegerSampleCounts, sampledImageDepthSampleCounts;
    VkFlags sampledImageStencilSampleCounts, storageImageSampleCounts;
    uint32_t maxSampleMaskWords;
    VkBool32 timestampComputeAndGraphics;
    float timestampPeriod;
    uint32_t maxClipDistances, maxCullDistances, maxCombinedClipAndCullDistances, discreteQueuePriorities;
    float pointSizeRange[2], lineWidthRange[2];
    float pointSizeGranularity, lineWidthGranularity;
    VkBool32 strictLines, standardSampleLocations;
    VkDeviceSize optimalBufferCopyOffsetAlignment, optimalBufferCopyRowPitchAlignment, nonCoherentAtomSize;
} VkPhysicalDeviceLimits;

typedef struct VkPhysicalDeviceProperties {
    uint32_t apiVersion, driverVersion, vendorID, deviceID;
    int32_t deviceType;
    char deviceName[256];
    uint8_t pipelineCacheUUID[16];
    VkPhysicalDeviceLimits limits;
    VkBool32 sparseProperties[5];
} VkPhysicalDeviceProperties;

typedef struct VkPhysicalDeviceProperties2 {
    VkStructureType sType;
    void *pNext;
    VkPhysicalDeviceProperties properties;
} VkPhysicalDeviceProperties2;

typedef struct VkPhysicalDeviceShaderSMBuiltinsPropertiesNV {
    VkStructureType sType;
    void *pNext;
    uint32_t shaderSMCount, shaderWarpsPerSM;
} VkPhysicalDeviceShaderSMBuiltinsPropertiesNV;

typedef struct VkPhysicalDeviceSubgroupProperties {
    VkStructureType sType;
    void *pNext;
    uint32_t subgroupSize;
    VkFlags supportedStages, supportedOperations;
    VkBool32 quadOperationsInAllStages;
} VkPhysicalDeviceSubgroupProperties;

/* VkPhysicalDeviceFeatures: 55 VkBool32 in the order of the spec; the
 * backend reads shaderFloat64 (index 39), shaderInt64 (40), shaderInt16 (41)
 * and leaves robustBufferAccess (0) off. */
#define VK_FEATURE_ROBUST_BUFFER_ACCESS 0
#define VK_FEATURE_SHADER_FLOAT64 39
#define VK_FEATURE_SHADER_INT64 40
#define VK_FEATURE_SHADER_INT16 41
typedef struct VkPhysicalDeviceFeatures2 {
    VkStructureType sType;
    void *pNext;
    VkBool32 features[55];
} VkPhysicalDeviceFeatures2;

typedef struct VkPhysicalDevice16BitStorageFeatures {
    VkStructureType sType;
    void *pNext;
    VkBool32 storageBuffer16BitAccess, uniformAndStorageBuffer16BitAccess, storagePushConstant16, storageInputOutput16;
} VkPhysicalDevice16BitStorageFeatures;

typedef struct VkPhysicalDevice8BitStorageFeatures {
    VkStructureType sType;
    void *pNext;
    VkBool32 storageBuffer8BitAccess, uniformAndStorageBuffer8BitAccess, storagePushConstant8;
} VkPhysicalDevice8BitStorageFeatures;

typedef struct VkPhysicalDeviceShaderFloat16Int8Features {
    VkStructureType sType;
    void *pNext;
    VkBool32 shaderFloat16, shaderInt8;
} VkPhysicalDeviceShaderFloat16Int8Features;

typedef struct VkPhysicalDeviceShaderAtomicInt64Features {
    VkStructureType sType;
    void *pNext;
    VkBool32 shaderBufferInt64Atomics, shaderSharedInt64Atomics;
} VkPhysicalDeviceShaderAtomicInt64Features;

typedef struct VkPhysicalDeviceShaderAtomicFloatFeaturesEXT {
    VkStructureType sType;
    void *pNext;
    VkBool32 shaderBufferFloat32Atomics, shaderBufferFloat32AtomicAdd;
    VkBool32 shaderBufferFloat64Atomics, shaderBufferFloat64AtomicAdd;
    VkBool32 shaderSharedFloat32Atomics, shaderSharedFloat32AtomicAdd;
    VkBool32 shaderSharedFloat64Atomics, shaderSharedFloat64AtomicAdd;
    VkBool32 shaderImageFloat32Atomics, shaderImageFloat32AtomicAdd;
    VkBool32 sparseImageFloat32Atomics, sparseImageFloat32AtomicAdd;
} VkPhysicalDeviceShaderAtomicFloatFeaturesEXT;

typedef struct VkPhysicalDeviceCooperativeMatrixFeaturesKHR {
    VkStructureType sType;
    void *pNext;
    VkBool32 cooperativeMatrix, cooperativeMatrixRobustBufferAccess;
} VkPhysicalDeviceCooperativeMatrixFeaturesKHR;

typedef struct VkCooperativeMatrixPropertiesKHR {
    VkStructureType sType;
    void *pNext;
    uint32_t MSize, NSize, KSize;
    int32_t AType, BType, CType, ResultType;
    VkBool32 saturatingAccumulation;
    int32_t scope;
} VkCooperativeMatrixPropertiesKHR;

typedef struct VkQueueFamilyProperties {
    VkFlags queueFlags;
    uint32_t queueCount;
    uint32_t timestampValidBits;
    uint32_t minImageTransferGranularity[3];
} VkQueueFamilyProperties;

typedef struct VkMemoryType {
    VkFlags propertyFlags;
    uint32_t heapIndex;
} VkMemoryType;

typedef struct VkMemoryHeap {
    VkDeviceSize size;
    VkFlags flags;
} VkMemoryHeap;

typedef struct VkPhysicalDeviceMemoryProperties {
    uint32_t memoryTypeCount;
    VkMemoryType memoryTypes[32];
    uint32_t memoryHeapCount;
    VkMemoryHeap memoryHeaps[16];
} VkPhysicalDeviceMemoryProperties;

typedef struct VkExtensionProperties {
    char extensionName[256];
    uint32_t specVersion;
} VkExtensionProperties;

typedef struct VkDeviceQueueCreateInfo {
    VkStructureType sType;
    const void *pNext;
    VkFlags flags;
    uint32_t queueFamilyIndex;
    uint32_t queueCount;
    const float *pQueuePriorities;
} VkDeviceQueueCreateInfo;

typedef struct VkDeviceCreateInfo {
    VkStructureType sType;
    const void *pNext;
    VkFlags flags;
    uint32_t queueCreateInfoCount;
    const VkDeviceQueueCreateInfo *pQueueCreateInfos;
    uint32_t enabledLayerCount;
    const char *const *ppEnabledLayerNames;
    uint32_t enabledExtensionCount;
    const char *const *ppEnabledExtensionNames;
    const void *pEnabledFeatures;
} VkDeviceCreateInfo;

typedef struct VkBufferCreateInfo {
    VkStructureType sType;
    const void *pNext;
    VkFlags flags;
    VkDeviceSize size;
    VkFlags usage;
    int32_t sharingMode;
    uint32_t queueFamilyIndexCount;
    const uint32_t *pQueueFamilyIndices;
} VkBufferCreateInfo;

typedef struct VkMemoryRequirements {
    VkDeviceSize size, alignment;
    uint32_t memoryTypeBits;
} VkMemoryRequirements;

typedef struct VkMemoryAllocateInfo {
    VkStructureType sType;
    const void *pNext;
    VkDeviceSize allocationSize;
    uint32_t memoryTypeIndex;
} VkMemoryAllocateInfo;

typedef struct VkShaderModuleCreateInfo {
    VkStructureType sType;
    const void *pNext;
    VkFlags flags;
    size_t codeSize;
    const uint32_t *pCode;
} VkShaderModuleCreateInfo;

typedef struct VkDescriptorSetLayoutBinding {
    uint32_t binding;
    int32_t descriptorType;
    uint32_t descriptorCount;
    VkFlags stageFlags;
    const void *pImmutableSamplers;
} VkDescriptorSetLayoutBinding;

typedef struct VkDescriptorSetLayoutCreateInfo {
    VkStructureType sType;
    const void *pNext;
    VkFlags flags;
    uint32_t bindingCount;
    const VkDescriptorSetLayoutBinding *pBindings;
} VkDescriptorSetLayoutCreateInfo;

typedef struct VkPushConstantRange {
    VkFlags stageFlags;
    uint32_t offset, size;
} VkPushConstantRange;

typedef struct VkPipelineLayoutCreateInfo {
    VkStructureType sType;
    const void *pNext;
    VkFlags flags;
    uint32_t setLayoutCount;
    const VkDescriptorSetLayout *pSetLayouts;
    uint32_t pushConstantRangeCount;
    const VkPushConstantRange *pPushConstantRanges;
} VkPipelineLayoutCreateInfo;

typedef struct VkPipelineShaderStageCreateInfo {
    VkStructureType sType;
    const void *pNext;
    VkFlags flags;
    VkFlags stage;
    VkShaderModule module;
    const char *pName;
    const void *pSpecializationInfo;
} VkPipelineShaderStageCreateInfo;

typedef struct VkComputePipelineCreateInfo {
    VkStructureType sType;
    const void *pNext;
    VkFlags flags;
    VkPipelineShaderStageCreateInfo stage;
    VkPipelineLayout layout;
    VkPipeline basePipelineHandle;
    int32_t basePipelineIndex;
} VkComputePipelineCreateInfo;

typedef struct VkDescriptorPoolSize {
    int32_t type;
    uint32_t descriptorCount;
} VkDescriptorPoolSize;

typedef struct VkDescriptorPoolCreateInfo {
    VkStructureType sType;
    const void *pNext;
    VkFlags flags;
    uint32_t maxSets;
    uint32_t poolSizeCount;
    const VkDescriptorPoolSize *pPoolSizes;
} VkDescriptorPoolCreateInfo;

typedef struct VkDescriptorSetAllocateInfo {
    VkStructureType sType;
    const void *pNext;
    VkDescriptorPool descriptorPool;
    uint32_t descriptorSetCount;
    const VkDescriptorSetLayout *pSetLayouts;
} VkDescriptorSetAllocateInfo;

typedef struct VkDescriptorBufferInfo {
    VkBuffer buffer;
    VkDeviceSize offset, range;
} VkDescriptorBufferInfo;

typedef struct VkWriteDescriptorSet {
    VkStructureType sType;
    const void *pNext;
    VkDescriptorSet dstSet;
    uint32_t dstBinding, dstArrayElement, descriptorCount;
    int32_t descriptorType;
    const void *pImageInfo;
    const VkDescriptorBufferInfo *pBufferInfo;
    const void *pTexelBufferView;
} VkWriteDescriptorSet;

typedef struct VkCommandPoolCreateInfo {
    VkStructureType sType;
    const void *pNext;
    VkFlags flags;
    uint32_t queueFamilyIndex;
} VkCommandPoolCreateInfo;

typedef struct VkCommandBufferAllocateInfo {
    VkStructureType sType;
    const void *pNext;
    VkCommandPool commandPool;
    int32_t level;
    uint32_t commandBufferCount;
} VkCommandBufferAllocateInfo;

typedef struct VkCommandBufferBeginInfo {
    VkStructureType sType;
    const void *pNext;
    VkFlags flags;
    const void *pInheritanceInfo;
} VkCommandBufferBeginInfo;

typedef struct VkBufferCopy {
    VkDeviceSize srcOffset, dstOffset, size;
} VkBufferCopy;

typedef struct VkMemoryBarrier {
    VkStructureType sType;
    const void *pNext;
    VkFlags srcAccessMask, dstAccessMask;
} VkMemoryBarrier;

typedef struct VkSubmitInfo {
    VkStructureType sType;
    const void *pNext;
    uint32_t waitSemaphoreCount;
    const VkSemaphore *pWaitSemaphores;
    const VkFlags *pWaitDstStageMask;
    uint32_t commandBufferCount;
    const VkCommandBuffer *pCommandBuffers;
    uint32_t signalSemaphoreCount;
    const VkSemaphore *pSignalSemaphores;
} VkSubmitInfo;

typedef struct VkFenceCreateInfo {
    VkStructureType sType;
    const void *pNext;
    VkFlags flags;
} VkFenceCreateInfo;

typedef struct VkQueryPoolCreateInfo {
    VkStructureType sType;
    const void *pNext;
    VkFlags flags;
    int32_t queryType;
    uint32_t queryCount;
    VkFlags pipelineStatistics;
} VkQueryPoolCreateInfo;

/* Every entry point the backend takes from libvulkan.so.1, once: the
 * table's fields and the names vk_api.c resolves come from this list (the
 * loader exports the core 1.0 and 1.1 commands; extension commands are
 * looked up with vkGetInstanceProcAddr). */
#define VK_SYMBOLS(X)                                                                                          \
    X(GetInstanceProcAddr, "vkGetInstanceProcAddr", void *, (VkInstance, const char *))                       \
    X(EnumerateInstanceVersion, "vkEnumerateInstanceVersion", VkResult, (uint32_t *))                         \
    X(CreateInstance, "vkCreateInstance", VkResult, (const VkInstanceCreateInfo *, const void *, VkInstance *)) \
    X(DestroyInstance, "vkDestroyInstance", void, (VkInstance, const void *))                                  \
    X(EnumeratePhysicalDevices, "vkEnumeratePhysicalDevices", VkResult, (VkInstance, uint32_t *, VkPhysicalDevice *)) \
    X(GetPhysicalDeviceProperties2, "vkGetPhysicalDeviceProperties2", void,                                     \
      (VkPhysicalDevice, VkPhysicalDeviceProperties2 *))                                                        \
    X(GetPhysicalDeviceFeatures2, "vkGetPhysicalDeviceFeatures2", void, (VkPhysicalDevice, VkPhysicalDeviceFeatures2 *)) \
    X(GetPhysicalDeviceQueueFamilyProperties, "vkGetPhysicalDeviceQueueFamilyProperties", void,               \
      (VkPhysicalDevice, uint32_t *, VkQueueFamilyProperties *))                                                \
    X(GetPhysicalDeviceMemoryProperties, "vkGetPhysicalDeviceMemoryProperties", void,                         \
      (VkPhysicalDevice, VkPhysicalDeviceMemoryProperties *))                                                   \
    X(EnumerateDeviceExtensionProperties, "vkEnumerateDeviceExtensionProperties", VkResult,                   \
      (VkPhysicalDevice, const char *, uint32_t *, VkExtensionProperties *))                                    \
    X(CreateDevice, "vkCreateDevice", VkResult, (VkPhysicalDevice, const VkDeviceCreateInfo *, const void *, VkDevice *)) \
    X(DestroyDevice, "vkDestroyDevice", void, (VkDevice, const void *))                                        \
    X(GetDeviceQueue, "vkGetDeviceQueue", void, (VkDevice, uint32_t, uint32_t, VkQueue *))                      \
    X(CreateBuffer, "vkCreateBuffer", VkResult, (VkDevice, const VkBufferCreateInfo *, const void *, VkBuffer *)) \
    X(DestroyBuffer, "vkDestroyBuffer", void, (VkDevice, VkBuffer, const void *))                              \
    X(GetBufferMemoryRequirements, "vkGetBufferMemoryRequirements", void, (VkDevice, VkBuffer, VkMemoryRequirements *)) \
    X(AllocateMemory, "vkAllocateMemory", VkResult,                                                            \
      (VkDevice, const VkMemoryAllocateInfo *, const void *, VkDeviceMemory *))                                 \
    X(FreeMemory, "vkFreeMemory", void, (VkDevice, VkDeviceMemory, const void *))                              \
    X(BindBufferMemory, "vkBindBufferMemory", VkResult, (VkDevice, VkBuffer, VkDeviceMemory, VkDeviceSize))    \
    X(MapMemory, "vkMapMemory", VkResult, (VkDevice, VkDeviceMemory, VkDeviceSize, VkDeviceSize, VkFlags, void **)) \
    X(UnmapMemory, "vkUnmapMemory", void, (VkDevice, VkDeviceMemory))                                          \
    X(CreateShaderModule, "vkCreateShaderModule", VkResult,                                                    \
      (VkDevice, const VkShaderModuleCreateInfo *, const void *, VkShaderModule *))                             \
    X(DestroyShaderModule, "vkDestroyShaderModule", void, (VkDevice, VkShaderModule, const void *))            \
    X(CreateDescriptorSetLayout, "vkCreateDescriptorSetLayout", VkResult,                                      \
      (VkDevice, const VkDescriptorSetLayoutCreateInfo *, const void *, VkDescriptorSetLayout *))               \
    X(DestroyDescriptorSetLayout, "vkDestroyDescriptorSetLayout", void, (VkDevice, VkDescriptorSetLayout, const void *)) \
    X(CreatePipelineLayout, "vkCreatePipelineLayout", VkResult,                                                \
      (VkDevice, const VkPipelineLayoutCreateInfo *, const void *, VkPipelineLayout *))                         \
    X(DestroyPipelineLayout, "vkDestroyPipelineLayout", void, (VkDevice, VkPipelineLayout, const void *))      \
    X(CreateComputePipelines, "vkCreateComputePipelines", VkResult,                                            \
      (VkDevice, VkPipelineCache, uint32_t, const VkComputePipelineCreateInfo *, const void *, VkPipeline *))   \
    X(DestroyPipeline, "vkDestroyPipeline", void, (VkDevice, VkPipeline, const void *))                        \
    X(CreateDescriptorPool, "vkCreateDescriptorPool", VkResult,                                                \
      (VkDevice, const VkDescriptorPoolCreateInfo *, const void *, VkDescriptorPool *))                         \
    X(DestroyDescriptorPool, "vkDestroyDescriptorPool", void, (VkDevice, VkDescriptorPool, const void *))      \
    X(AllocateDescriptorSets, "vkAllocateDescriptorSets", VkResult,                                            \
      (VkDevice, const VkDescriptorSetAllocateInfo *, VkDescriptorSet *))                                       \
    X(UpdateDescriptorSets, "vkUpdateDescriptorSets", void,                                                    \
      (VkDevice, uint32_t, const VkWriteDescriptorSet *, uint32_t, const void *))                               \
    X(CreateCommandPool, "vkCreateCommandPool", VkResult,                                                      \
      (VkDevice, const VkCommandPoolCreateInfo *, const void *, VkCommandPool *))                               \
    X(DestroyCommandPool, "vkDestroyCommandPool", void, (VkDevice, VkCommandPool, const void *))               \
    X(AllocateCommandBuffers, "vkAllocateCommandBuffers", VkResult,                                            \
      (VkDevice, const VkCommandBufferAllocateInfo *, VkCommandBuffer *))                                       \
    X(BeginCommandBuffer, "vkBeginCommandBuffer", VkResult, (VkCommandBuffer, const VkCommandBufferBeginInfo *)) \
    X(EndCommandBuffer, "vkEndCommandBuffer", VkResult, (VkCommandBuffer))                                     \
    X(CmdBindPipeline, "vkCmdBindPipeline", void, (VkCommandBuffer, int32_t, VkPipeline))                      \
    X(CmdBindDescriptorSets, "vkCmdBindDescriptorSets", void,                                                  \
      (VkCommandBuffer, int32_t, VkPipelineLayout, uint32_t, uint32_t, const VkDescriptorSet *, uint32_t,       \
       const uint32_t *))                                                                                       \
    X(CmdPushConstants, "vkCmdPushConstants", void,                                                            \
      (VkCommandBuffer, VkPipelineLayout, VkFlags, uint32_t, uint32_t, const void *))                           \
    X(CmdDispatchBase, "vkCmdDispatchBase", void,                                                              \
      (VkCommandBuffer, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t))                            \
    X(CmdCopyBuffer, "vkCmdCopyBuffer", void, (VkCommandBuffer, VkBuffer, VkBuffer, uint32_t, const VkBufferCopy *)) \
    X(CmdPipelineBarrier, "vkCmdPipelineBarrier", void,                                                        \
      (VkCommandBuffer, VkFlags, VkFlags, VkFlags, uint32_t, const VkMemoryBarrier *, uint32_t, const void *,  \
       uint32_t, const void *))                                                                                 \
    X(CmdResetQueryPool, "vkCmdResetQueryPool", void, (VkCommandBuffer, VkQueryPool, uint32_t, uint32_t))     \
    X(CmdWriteTimestamp, "vkCmdWriteTimestamp", void, (VkCommandBuffer, VkFlags, VkQueryPool, uint32_t))      \
    X(QueueSubmit, "vkQueueSubmit", VkResult, (VkQueue, uint32_t, const VkSubmitInfo *, VkFence))              \
    X(CreateFence, "vkCreateFence", VkResult, (VkDevice, const VkFenceCreateInfo *, const void *, VkFence *))  \
    X(DestroyFence, "vkDestroyFence", void, (VkDevice, VkFence, const void *))                                 \
    X(WaitForFences, "vkWaitForFences", VkResult, (VkDevice, uint32_t, const VkFence *, VkBool32, uint64_t))   \
    X(ResetFences, "vkResetFences", VkResult, (VkDevice, uint32_t, const VkFence *))                           \
    X(CreateQueryPool, "vkCreateQueryPool", VkResult,                                                          \
      (VkDevice, const VkQueryPoolCreateInfo *, const void *, VkQueryPool *))                                   \
    X(DestroyQueryPool, "vkDestroyQueryPool", void, (VkDevice, VkQueryPool, const void *))                     \
    X(GetQueryPoolResults, "vkGetQueryPoolResults", VkResult,                                                  \
      (VkDevice, VkQueryPool, uint32_t, uint32_t, size_t, void *, VkDeviceSize, VkFlags))

typedef struct vk_api {
    VK_SYMBOLS(TILEC_DL_FIELD)
    /* VK_KHR_cooperative_matrix, through vkGetInstanceProcAddr; NULL without it */
    VkResult (*GetPhysicalDeviceCooperativeMatrixPropertiesKHR)(VkPhysicalDevice, uint32_t *,
                                                                VkCooperativeMatrixPropertiesKHR *);
} vk_api_t;

/* A cooperative-matrix shape the device offers at subgroup scope. */
typedef struct vk_coopmat {
    uint32_t m, n, k;
    int32_t a, b, c, r;          /* VK_COMPONENT_TYPE_* of A, B, C and the result */
} vk_coopmat_t;

#define VK_MAX_COOPMAT 32

/* The feature structs the backend queries and enables, chained from f2
 * by vk_features_link (which structs: VK_CHAIN_* bits). */
typedef struct vk_features {
    VkPhysicalDeviceFeatures2 f2;
    VkPhysicalDevice16BitStorageFeatures s16;
    VkPhysicalDevice8BitStorageFeatures s8;
    VkPhysicalDeviceShaderFloat16Int8Features f16i8;
    VkPhysicalDeviceShaderAtomicInt64Features a64;
    VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af;
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR cm;
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR cmnv; /* the NV struct has the same layout */
} vk_features_t;
#define VK_CHAIN_8BIT (1u << 0)
#define VK_CHAIN_F16I8 (1u << 1)
#define VK_CHAIN_A64 (1u << 2)
#define VK_CHAIN_AF (1u << 3)
#define VK_CHAIN_CM (1u << 4)
#define VK_CHAIN_CMNV (1u << 5)
/* Sets every sType and links the pNext chain of f for the bits of mask. */
void vk_features_link(vk_features_t *f, uint32_t mask);

/* One physical device with a compute queue. */
typedef struct vk_dev {
    VkPhysicalDevice pd;
    VkPhysicalDeviceProperties props;
    VkPhysicalDeviceMemoryProperties mem;
    uint32_t queue_family, timestamp_bits;
    uint32_t subgroup_size, subgroup_ops;
    uint64_t device_local_bytes;
    uint32_t compute_units;      /* NVIDIA's SM count, a CPU device's cores, else 1 */
    /* features (queried; enabled at device creation) */
    int f16_storage, i8_storage, f16_arith, i8_arith, i16, i64, f64, i64_atomics, f32_atomic_add,
        f64_atomic_add, coopmat;
    /* T.gemm on cooperative matrices: GL_NV_cooperative_matrix (the GLSL
     * extension Debian 12's glslc knows) with a 16x16x16 f16*f16+f32 shape
     * at subgroup scope among those the device reports */
    int gemm_coopmat;
    int has_atomic_float_ext, has_coopmat_ext;
    vk_features_t feat;          /* as queried: what device creation enables */
    uint32_t chain;              /* VK_CHAIN_* of feat */
    const char *exts[8];         /* device extensions to enable */
    uint32_t nexts;
    uint32_t ncoopmat;
    vk_coopmat_t coopmats[VK_MAX_COOPMAT];
} vk_dev_t;

typedef struct vk_state {
    int ok;                   /* library loaded, instance created, at least one device */
    char why[512];            /* reason when not ok */
    vk_api_t vk;
    VkInstance instance;
    uint32_t api_version;     /* of the instance */
    vk_dev_t *devs;
    uint32_t ndevs;
} vk_state_t;

/* Loads the library, creates the instance and enumerates devices once;
 * thread-safe. */
const vk_state_t *vk_state(void);
/* "VK_ERROR_OUT_OF_DEVICE_MEMORY (-2)" style name of a result. */
const char *vk_result_name(VkResult r);

/* ---- code generation (vk_codegen.c, vk_glslc.c) ---------------------------------- */

/* The dialect's state during one generation (the hooks' user pointer). */
typedef struct vk_gen {
    const vk_dev_t *dev;
    int nthreads;                /* of the kernel's block */
    int used_coopmat;            /* a T.gemm went to cooperative matrices */
    /* the gemm whose accumulators registers hold across the loop being
     * printed (tm x tn tiles per subgroup), NULL */
    const tilec_ir_stmt_t *live;
    int live_tm, live_tn;
} vk_gen_t;
/* Fills the GLSL dialect for g->dev (native atomics where its features
 * allow, T.gemm on cooperative matrices where it has them); g must live as
 * long as d. */
void vk_dialect(vk_gen_t *g, tilec_simt_dialect_t *d);
/* GLSL of module m for g->dev (the dialect above, g->nthreads from m's
 * kernel): tilec_simt_generate's result. */
int vk_generate(vk_gen_t *g, const tilec_ir_module_t *m, tilec_simt_result_t *res, char *err, size_t errlen);
/* Compiles GLSL compute source to SPIR-V with glslc (TILEC_GLSLC or PATH):
 * TILEC_PS_OK with the words in *spv (malloc'd), TILEC_PS_UNAVAILABLE
 * when there is no compiler, TILEC_PS_COMPILE_ERROR with its log. */
tilec_pstatus_t vk_glslc(const char *src, size_t len, const char *target_env, void **spv, size_t *spv_len);
/* The GLSL compiler's path, NULL when there is none. */
const char *vk_glslc_path(void);
/* The target description of the SDK's lowering passes (vk_target.c): for
 * a device of vk_state() (kept), or the Vulkan minimum without one;
 * vk_target_fill writes the one of any device (name left NULL). */
const struct tilec_target_desc *vk_target_desc(const vk_dev_t *dev);
void vk_target_fill(const vk_dev_t *dev, struct tilec_target_desc *t);

#endif
