import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../http/auth.js';
import { bodyErrorResponses, DeleteResponse, errorResponses, Uuid } from '../../http/schemas.js';
import type { EvaluationService } from './evaluation.js';
import { EvalQuestion, EvalQuestionInput, EvalQuestionParams, EvalRun, EvalSetBody, Evaluation } from './schema.js';

/** A Plus entry's evaluation set (modules/plus/evaluation.ts): the questions, their passages, the last run. */
export const evaluationRoutes: FastifyPluginAsyncTypebox<{ evaluation: EvaluationService }> = async (app, { evaluation }) => {
  const tags = ['plus'];
  const PlusParams = Type.Object({ plusId: Uuid });

  app.get(
    '/plus/:plusId/evaluation',
    {
      schema: {
        tags,
        operationId: 'getPlusEvaluation',
        summary: "A Plus entry's evaluation set and its last run",
        params: PlusParams,
        response: { 200: Evaluation, ...errorResponses },
      },
    },
    async (req) => evaluation.get(principalOf(req), req.params.plusId),
  );

  app.put(
    '/plus/:plusId/evaluation',
    {
      schema: {
        tags,
        operationId: 'replacePlusEvaluation',
        summary: "Replace a Plus entry's evaluation set (the creator of the entry or a team owner/admin)",
        params: PlusParams,
        body: EvalSetBody,
        response: { 200: Evaluation, ...bodyErrorResponses },
      },
    },
    async (req) => evaluation.replace(principalOf(req), req.params.plusId, req.body.questions),
  );

  app.post(
    '/plus/:plusId/evaluation/questions',
    {
      schema: {
        tags,
        operationId: 'addPlusEvaluationQuestion',
        summary: 'Add a question with its passage to the evaluation set',
        params: PlusParams,
        body: EvalQuestionInput,
        response: { 201: EvalQuestion, ...bodyErrorResponses },
      },
    },
    async (req, reply) => reply.code(201).send(await evaluation.add(principalOf(req), req.params.plusId, req.body)),
  );

  app.put(
    '/plus/:plusId/evaluation/questions/:questionId',
    {
      schema: {
        tags,
        operationId: 'updatePlusEvaluationQuestion',
        summary: 'Change a question of the evaluation set, or its passage',
        params: EvalQuestionParams,
        body: EvalQuestionInput,
        response: { 200: EvalQuestion, ...bodyErrorResponses },
      },
    },
    async (req) => evaluation.update(principalOf(req), req.params.plusId, req.params.questionId, req.body),
  );

  app.delete(
    '/plus/:plusId/evaluation/questions/:questionId',
    {
      schema: {
        tags,
        operationId: 'deletePlusEvaluationQuestion',
        summary: 'Remove a question from the evaluation set',
        params: EvalQuestionParams,
        response: { 200: DeleteResponse, ...errorResponses },
      },
    },
    async (req) => {
      await evaluation.delete(principalOf(req), req.params.plusId, req.params.questionId);
      return { deleted: true };
    },
  );

  app.post(
    '/plus/:plusId/evaluation/run',
    {
      schema: {
        tags,
        operationId: 'runPlusEvaluation',
        summary: "Run the evaluation set with the entry's retrieval and keep the figures (recall@5, MRR@10, nDCG@10)",
        params: PlusParams,
        response: { 200: EvalRun, ...errorResponses },
      },
    },
    async (req) => evaluation.run(principalOf(req), req.params.plusId),
  );
};
