#include "model/transformer_layer.h"

namespace ember::model {
namespace {

using A = Activation;
using W = LayerTensor;

// The block's output, post-normed and scaled as the architecture says; returns where it is.
Activation finishBlock(const ModelConfig& c, LayerOps& ops, int32_t layer, LayerTensor postNorm) {
  Activation delta = A::BlockOut;
  if (c.postNorms) {
    ops.rmsNorm(layer, postNorm, A::BlockOut, c.embeddingDim, A::PostNormed);
    delta = A::PostNormed;
  }
  if (c.residualScale != 1.0f) ops.scale(delta, c.residualScale);
  return delta;
}

// In: Normed = rmsnorm(Hidden, attn_norm) when preNorms. Out: Hidden += the attention's output
// and, when preNorms, Normed = rmsnorm(Hidden, ffn_norm).
void attentionBlock(const ModelConfig& c, LayerOps& ops, int32_t il) {
  const Activation in = c.preNorms ? A::Normed : A::Hidden;
  const LayerOps::Projection qkv[] = {{W::Wq, A::Q}, {W::Wk, A::K}, {W::Wv, A::V}};
  ops.projectShared(il, in, qkv);
  if (ops.has(il, W::Bq)) {
    ops.addBias(il, W::Bq, A::Q);
    ops.addBias(il, W::Bk, A::K);
    ops.addBias(il, W::Bv, A::V);
  }
  if (c.qkNormScope != QkNormScope::None) {
    const bool perHead = c.qkNormScope == QkNormScope::PerHead;
    ops.rmsNorm(il, W::QNorm, A::Q, perHead ? c.headDim : c.qDim(), A::Q);
    ops.rmsNorm(il, W::KNorm, A::K, perHead ? c.headDim : c.kvDim(), A::K);
  }
  if (c.layers[size_t(il)].rope) {
    ops.rope(il, A::Q, c.headCount);
    ops.rope(il, A::K, c.kvHeadCount);
  }
  ops.writeKv(il);
  if (il + 1 == c.layerCount) ops.keepOutputRowsOnly();
  ops.attention(il, attentionStep(c, il));
  ops.project(il, W::Wo, A::Attention, A::BlockOut);
  if (ops.has(il, W::Bo)) ops.addBias(il, W::Bo, A::BlockOut);
  const Activation delta = finishBlock(c, ops, il, W::PostAttnNorm);
  if (c.preNorms)
    ops.addResidualThenNorm(delta, il, W::FfnNorm, A::Normed, c.embeddingDim);
  else
    ops.addResidual(delta);
}

// In: Normed = rmsnorm(Hidden, ffn_norm) when preNorms. Out: Hidden += the FFN's output and, when
// preNorms and a layer follows, Normed = rmsnorm(Hidden, the next layer's attn_norm).
void feedForwardBlock(const ModelConfig& c, LayerOps& ops, int32_t il) {
  const Activation in = c.preNorms ? A::Normed : A::Hidden;
  if (c.mixtureOfExperts()) {
    ops.expertFeedForward(il, in, A::BlockOut);
  } else {
    const LayerOps::Projection gateUp[] = {{W::FfnGate, A::Gate}, {W::FfnUp, A::Up}};
    ops.projectShared(il, in, gateUp);
    if (ops.has(il, W::BGate)) ops.addBias(il, W::BGate, A::Gate);
    if (ops.has(il, W::BUp)) ops.addBias(il, W::BUp, A::Up);
    ops.gatedActivation(c.ffnActivation);
    ops.project(il, W::FfnDown, A::Activated, A::BlockOut);
    if (ops.has(il, W::BDown)) ops.addBias(il, W::BDown, A::BlockOut);
  }
  const Activation delta = finishBlock(c, ops, il, W::PostFfnNorm);
  if (c.preNorms && il + 1 < c.layerCount)
    ops.addResidualThenNorm(delta, il + 1, W::AttnNorm, A::Normed, c.embeddingDim);
  else
    ops.addResidual(delta);
}

}  // namespace

AttentionStep attentionStep(const ModelConfig& c, int32_t layer) {
  AttentionStep step;
  // llama.cpp scales Qcur in float before the attention for the architectures that do so in their
  // graphs (gemma2/3, phi3), else passes the scale to the softmax (kq_scale).
  if (c.scaleQueries)
    step.queryScale = c.attentionScale;
  else
    step.scoreScale = c.attentionScale;
  step.softcap = c.attentionSoftcap;
  step.window = c.layers[size_t(layer)].slidingWindow ? c.slidingWindow : 0;
  step.sinks = c.attentionSinks;
  return step;
}

void runTransformerLayers(const ModelConfig& c, LayerOps& ops) {
  if (c.preNorms) ops.rmsNorm(0, W::AttnNorm, A::Hidden, c.embeddingDim, A::Normed);
  for (int32_t il = 0; il < c.layerCount; ++il) {
    attentionBlock(c, ops, il);
    feedForwardBlock(c, ops, il);
  }
}

}  // namespace ember::model
