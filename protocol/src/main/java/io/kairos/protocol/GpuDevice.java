package io.kairos.protocol;

/** One GPU as its agent found it (or emulates it). */
public record GpuDevice(int index, String uuid, String model, long memoryBytes) {}
