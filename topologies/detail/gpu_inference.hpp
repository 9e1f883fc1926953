// Which GPU a topology file describes when it does not name it.
//
// A GPU's PCI device id names its model (the GPU table, hardware.hpp). Some files carry no id
// (AWS's p5 file, dumps edited by hand), yet what they do say still narrows the model down, the
// way a detective narrows down suspects: each clue the file gives is held against every model in
// the table, and for each model it fits, says nothing, or rules the model out.
//   - compute capability, <gpu sm>: fits the models of that sm, rules out every other;
//   - NVLinks, the <nvlink count> of a GPU added up, and where they go: to an NVSwitch, they fit
//     the SXM models with that many links; to one other GPU only, a PCIe card's NVLink bridge of
//     that many; to several GPUs and no NVSwitch, an SXM board without one (4-GPU HGX). Every
//     other model is ruled out. A GPU with none listed gives no clue: AWS's files leave out the
//     18 NVLinks a p5 GPU has;
//   - the GPU's own PCIe link (link_speed, link_width): the card's own rate and width fit; a
//     slower or narrower link says nothing (a gen5 card in a gen4 slot trains to gen4); a faster
//     one rules the card out (a gen5 link is no Ampere GPU's);
//   - the network a GPU gets, the file's <net> speeds over its GPUs: what the model's reference
//     node gives each GPU (DGX A100: HDR 200 Gb/s; DGX H100 and H200: NDR 400) fits; anything
//     else says nothing, as a network is its buyer's choice. A weak clue: it never decides between
//     GPUs of different compute (those the GPU's own clues fit alike tie), and can only tell apart
//     models that the others leave standing.
// The number of GPUs is no clue: NCCL lists the GPUs of its job, and 8-GPU PCIe servers exist.
//
// A model's score is the number of clues it fits. The model that scores highest, alone, is the
// answer: SURE when every other model is ruled out, LIKELY when others remain that fit fewer
// clues. Models that tie and differ only in memory (H100 SXM and H200; A100 40 and 80 GB) no
// topology file can tell apart: the one with the least memory is the answer (MEMORY UNKNOWN),
// so that a plan made for it fits the others too. Any other tie is no answer (TIED), nor is a
// table whose every model is ruled out (NO FIT): the importer refuses the file then and says
// which models tied and how they differ.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "topologies/hardware.hpp"

namespace burst::topo::hw {

// What a topology file says of one GPU whose PCI device id it does not give.
struct GpuClues {
  int sm = 0;                       // <gpu sm>; 0: not stated
  int nvlinks = 0;                  // links its <nvlink> elements count; 0: none listed
  bool to_nvswitch = false;         // some of them go to an NVSwitch
  int nvlink_peers = 0;             // the other GPUs its direct NVLinks reach
  double pcie_gts = 0;              // its own <pci> link_speed, GT/s; 0: not stated
  int pcie_width = 0;               // its link_width; 0: not stated
  double network_Gbps_per_gpu = 0;  // the file's <net> speeds over its GPUs; 0: no <net>
};

enum class Sureness : std::uint8_t { Sure, Likely, MemoryUnknown, Tied, NoFit };

struct GpuInference {
  std::vector<std::string> clues;  // what the file said, as read: "sm 90", "PCIe gen5 x16"
  Sureness sureness = Sureness::NoFit;
  const GpuModel* model = nullptr;     // the answer; nullptr when Tied or NoFit
  std::vector<const GpuModel*> best;   // the top scorers: the answer alone, its memory twins, or the tie
  std::vector<const GpuModel*> fewer;  // models not ruled out that fit fewer clues, best first
  // How sure, in words: "sure: every other GPU model we know is ruled out by them", "likely: ...",
  // or for a tie what the tied models differ in.
  std::string reason;
};

[[nodiscard]] GpuInference infer_gpu_model(const GpuClues& clues);

// "sm 90, PCIe gen5 x16", or what is missing when the file gives no clue at all.
[[nodiscard]] std::string clue_list(const GpuInference& inference);

}  // namespace burst::topo::hw
